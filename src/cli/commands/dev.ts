import { statSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Option, type Command } from 'commander';
import { UsageError } from '../errors.js';
import { resolveArmConfig } from './sim-serve-arm.js';
import { bounded, MAX_SEED, REPAIR_POLICIES_HELP, repairPoliciesFlag } from '../flags.js';
import type { RepairPolicy } from '../../disruption/repair.js';

interface DevFlags {
  stateDir: string;
  seed: number;
  scenario: string;
  logLevel: 'debug' | 'info' | 'warn' | 'error';
  repairPolicies?: RepairPolicy[];
  clusters: number;
}

const SECOND_CLUSTER_NAME = 'azflex-dev-2';

/**
 * `azflex dev`: etcd, kube-apiserver, kube-scheduler, the fake ARM over HTTPS, a simulated
 * kubelet and the real controller on this machine; prints where to point kubectl and runs
 * until SIGINT/SIGTERM.
 */
export function register(program: Command): void {
  program
    .command('dev')
    .description('run a local cluster + simulated Azure + the controller; kubectl apply -f examples/ and watch')
    .option('--state-dir <dir>', 'kubeconfig, logs, etcd data (wiped at start)', path.join(os.tmpdir(), 'azflex-dev'))
    .option('--seed <n>', `seed of the fake ARM random stream (0..${MAX_SEED})`, bounded('--seed', 0, MAX_SEED), 1)
    .option('--scenario <s>', "fake ARM setup: 'default' (eastus2, quota for 2 H200), a built-in scenario, or a JSON file", 'default')
    .option('--repair-policies <Type=Status:toleration,...>', REPAIR_POLICIES_HELP, repairPoliciesFlag)
    .option('--clusters <n>', `clusters sharing the fake ARM and its resource groups (1 or 2); the second's controller runs as --cluster-name ${SECOND_CLUSTER_NAME}, its files in <state-dir>/${SECOND_CLUSTER_NAME}`, bounded('--clusters', 1, 2), 1)
    .addOption(new Option('--log-level <level>').choices(['debug', 'info', 'warn', 'error']).default('info'))
    .action(async (flags: DevFlags) => {
      const st = statSync(flags.stateDir, { throwIfNoEntry: false });
      if (st && !st.isDirectory()) throw new UsageError(`--state-dir ${flags.stateDir}: not a directory`);
      const armConfig = await resolveArmConfig(flags.scenario);
      const { startDev } = await import('../../dev/dev.js');
      const common = { armConfig, seed: flags.seed, logLevel: flags.logLevel, ...(flags.repairPolicies ? { repairPolicies: flags.repairPolicies } : {}) };
      const dev = await startDev({ ...common, stateDir: flags.stateDir });
      const summary = (d: typeof dev, stateDir: string): string[] =>
        devSummary({ kubeconfigPath: d.kubeconfigPath, armEndpoint: d.armEndpoint, armCaCertPath: d.armCaCertPath, examplesDir: d.examplesDir, metricsPort: d.controller()?.metricsPort, logsDir: path.join(stateDir, 'control-plane') });
      const lines = summary(dev, flags.stateDir);
      // A second cluster whose NodeClasses name the same resource groups (the examples do).
      const second = flags.clusters === 2 ? await startDev({ ...common, stateDir: path.join(flags.stateDir, SECOND_CLUSTER_NAME), clusterName: SECOND_CLUSTER_NAME, sharedArm: dev.served }).catch(async (e: unknown) => {
        await dev.stop();
        throw e;
      }) : undefined;
      if (second) lines.push(`second cluster (--cluster-name ${SECOND_CLUSTER_NAME}), same fake ARM:`, ...summary(second, path.join(flags.stateDir, SECOND_CLUSTER_NAME)));
      process.stdout.write(`${lines.join('\n')}\n`);
      await new Promise<void>((resolve) => {
        const stop = (): void => {
          process.off('SIGINT', stop);
          process.off('SIGTERM', stop);
          process.stderr.write('azflex dev: stopping\n');
          // The second cluster uses the first's fake ARM: it stops first.
          void (second ? second.stop() : Promise.resolve()).then(() => dev.stop()).then(resolve, resolve);
        };
        process.on('SIGINT', stop);
        process.on('SIGTERM', stop);
      });
    });
}

/** What `azflex dev` prints: where everything is, and the commands to start with. */
export function devSummary(d: { kubeconfigPath: string; armEndpoint: string; armCaCertPath: string; examplesDir: string; metricsPort: number | undefined; logsDir: string }): string[] {
  return [
    `kubeconfig:   ${d.kubeconfigPath}`,
    `ARM endpoint: ${d.armEndpoint} (CA ${d.armCaCertPath}; POST /_sim/faults, /_sim/clock/advance)`,
    `metrics:      http://127.0.0.1:${d.metricsPort ?? '?'}/metrics (Karpenter's karpenter_* and azflex_*; /healthz, /readyz)`,
    `examples:     ${d.examplesDir} (examples/ retargeted at the fake ARM)`,
    `logs:         ${d.logsDir}/*.log`,
    '',
    `  export KUBECONFIG=${d.kubeconfigPath}`,
    `  kubectl apply -f ${d.examplesDir}`,
    '  kubectl get nodeclaims,nodes,pods -A -w',
    '',
    // True of this in-process controller only: `azflex controller` against `sim serve-arm` keeps its own wall clock.
    "  # skip ARM's 180 s NIC reservation (the fake ARM's clock and this in-process controller's move together):",
    `  curl --cacert ${d.armCaCertPath} -X POST '${d.armEndpoint}/_sim/clock/advance?seconds=181'`,
    '',
  ];
}
