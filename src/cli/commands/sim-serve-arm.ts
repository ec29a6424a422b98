import { existsSync } from 'node:fs';
import { InputFileError, parseYamlDocuments, readBoundedFile } from '../../sim/input-files.js';
import type { Command } from 'commander';
import { defaultFakeArmConfig } from '../../sim/arm/defaults.js';
import { parseFakeArmConfig, ScenarioConfigError } from '../../sim/arm/scenario-config.js';
import type { FakeArmConfig } from '../../sim/arm/types.js';
import { UsageError } from '../errors.js';
import { bounded, MAX_SEED } from '../flags.js';

/**
 * `azflex sim serve-arm`: the fake ARM behind an HTTPS endpoint, for driving the real SDK
 * adapter (or curl) against deterministic Azure behaviour. Prints one JSON line when ready
 * and serves until SIGINT/SIGTERM.
 */
interface ServeArmFlags {
  port: number;
  scenario: string;
  seed: number;
  manualClock?: boolean;
}

export function register(program: Command): void {
  // `sim` is a command group others may add to as well: reuse it when it exists.
  const sim = program.commands.find((c) => c.name() === 'sim') ?? program.command('sim').description('Simulator tools');
  sim
    .command('serve-arm')
    .description('Serve the deterministic fake ARM over HTTPS (self-signed CA; any bearer token is accepted)')
    .option('--port <port>', 'TCP port on 127.0.0.1 (0 = any free port)', bounded('--port', 0, 65535), 0)
    .option('--scenario <scenario>', "'default', a built-in scenario name, or a YAML/JSON file (FakeArmConfig or scenario; at most 1 MiB)", 'default')
    .option('--seed <n>', `seed of the fake ARM random stream (0..${MAX_SEED})`, bounded('--seed', 0, MAX_SEED), 1)
    .option('--manual-clock', 'virtual time moves only on POST /_sim/clock/advance?seconds=N')
    .action(async (flags: ServeArmFlags) => {
      const config = await resolveArmConfig(flags.scenario);
      // Loaded lazily so the CLI's other commands do not pay for TLS and selfsigned.
      const { serveArm } = await import('../../sim/arm/https-face.js');
      const served = await serveArm({
        port: flags.port,
        host: '127.0.0.1',
        scenarioConfig: config,
        seed: flags.seed,
        clockMode: flags.manualClock ? 'manual' : 'realtime',
      });
      process.stdout.write(`${JSON.stringify({ endpoint: served.endpoint, caCertPath: served.caCertPath, subscriptionId: served.subscriptionId })}\n`);
      await new Promise<void>((resolve) => {
        const stop = (): void => {
          process.off('SIGINT', stop);
          process.off('SIGTERM', stop);
          void served.close().then(resolve, resolve);
        };
        process.on('SIGINT', stop);
        process.on('SIGTERM', stop);
      });
    });
}

/** 'default' → the built-in fake ARM setup; a scenario name or file → its ARM part. */
export async function resolveArmConfig(nameOrPath: string): Promise<FakeArmConfig> {
  if (nameOrPath === 'default') return defaultFakeArmConfig();
  // The scenario modules are imported on demand: a scenario name needs them, `default` does not.
  const { builtInScenario, BUILT_IN_SCENARIOS } = await import('../../sim/scenarios.js');
  const { armConfigOf } = await import('../../sim/simulation.js');
  const builtIn = builtInScenario(nameOrPath);
  if (builtIn) return armConfigOf(builtIn);
  if (!existsSync(nameOrPath)) {
    throw new UsageError(`unknown scenario "${nameOrPath}": not 'default', a built-in (${BUILT_IN_SCENARIOS.join(', ')}) or an existing file`);
  }
  let raw: unknown;
  try {
    // Size-capped, regular files only, YAML or JSON (a JSON file is YAML), one document.
    const docs = parseYamlDocuments(readBoundedFile(nameOrPath), nameOrPath);
    if (docs.length !== 1) throw new InputFileError(`${nameOrPath}: a scenario file holds exactly one document, found ${docs.length}`);
    raw = docs[0];
  } catch (err) {
    if (err instanceof InputFileError) throw new UsageError(err.message);
    throw err;
  }
  try {
    // A scenario has NodeClasses; anything else is read as a FakeArmConfig (both may list subnets).
    if (raw === null || typeof raw !== 'object' || !('nodeClasses' in raw)) return parseFakeArmConfig(raw, nameOrPath);
    const { parseScenario } = await import('../../sim/scenario.js');
    return armConfigOf(parseScenario(raw, nameOrPath));
  } catch (err) {
    if (err instanceof ScenarioConfigError || (err instanceof Error && err.name === 'ScenarioError')) throw new UsageError(err.message);
    throw err;
  }
}


