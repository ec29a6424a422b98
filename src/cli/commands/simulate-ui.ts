import { UsageError } from '../errors.js';
import { formatComparison } from './simulate-format.js';
import type { StrategyName } from '../../runtime/deps.js';
import type { Scenario } from '../../sim/scenario.js';
import type { ClusterSetup } from '../../sim/cluster-setup.js';
import { sdkArmAdapter } from '../../sim/sdk-route.js';
import { leakSummary } from '../../sim/result.js';
import { startLiveSimulation } from '../../live/sim-run.js';

export interface SimulateUiOptions {
  scenario: Scenario;
  /** From --manifests: the cluster to start with. */
  cluster?: ClusterSetup;
  seed: number;
  strategy: StrategyName | 'all';
  hours?: number;
  restarts?: number;
  offeringsCache: boolean;
  arm: 'direct' | 'sdk';
  json?: boolean;
  assertNoLeaks?: boolean;
  /** `--ui` alone: a free port; `--ui 8080`: that one. */
  ui: number | true;
}

/** Where the page starts: paused, then one virtual minute per second once resumed. */
const START_SPEED = 60;

/**
 * `azflex simulate --ui [port]`: one strategy, paced by the page's controls, then the usual
 * report on stdout. The page stays up after the run (showing the settled world) until Ctrl-C.
 */
export async function simulateWithLiveView(o: SimulateUiOptions): Promise<void> {
  if (o.strategy === 'all') throw new UsageError('--ui runs one strategy at a time: pass --strategy <name>');
  const port = o.ui === true ? 0 : o.ui;
  if (port > 65_535) throw new UsageError(`--ui port must be at most 65535, got ${port}`);
  const live = await startLiveSimulation({
    simulation: {
      scenario: o.scenario,
      cluster: o.cluster,
      seed: o.seed,
      strategy: o.strategy,
      hours: o.hours,
      restarts: o.restarts,
      offeringsCache: o.offeringsCache === false ? false : undefined,
      // The live view keeps the history it shows; the run itself need not keep every entry.
      keepEventLog: false,
      armAdapter: o.arm === 'sdk' ? sdkArmAdapter : undefined,
    },
    port,
    paused: true,
    speed: START_SPEED,
  }).catch((err: unknown) => {
    if (err instanceof Error && 'code' in err && err.code === 'EADDRINUSE') throw new UsageError(`--ui: port ${port} is already in use`);
    throw err;
  });
  process.stderr.write(`azflex: live view at ${live.server.url} (paused: press Resume or Step there; Ctrl-C stops)\n`);

  const interrupted = new Promise<'interrupted'>((resolve) => process.once('SIGINT', () => resolve('interrupted')));
  const outcome = await Promise.race([live.run, interrupted]);
  if (outcome === 'interrupted') {
    await live.server.close();
    process.exitCode = 130;
    return;
  }
  const result = outcome.result;
  process.stdout.write(o.json ? `${JSON.stringify(result)}\n` : formatComparison(o.scenario, [result]));
  const leaks = leakSummary(result);
  if (o.assertNoLeaks && leaks !== undefined) {
    process.stderr.write(`azflex: leaks found with strategy ${result.strategy} (${leaks})\n`);
    process.exitCode = 1;
  }
  process.stderr.write(`azflex: simulation finished; the live view stays up at ${live.server.url} until Ctrl-C\n`);
  await interrupted;
  await live.server.close();
}
