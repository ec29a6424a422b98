// Prints the event-log hash of every built-in scenario (fleet only with --fleet: it takes minutes)
// at seeds 1-5, restarts {0, 5}, every cleanup strategy: one line each, sorted. A refactor that
// changes no behaviour leaves this output byte-identical; diff it before and after.
//   npx tsx scripts/event-log-hashes.ts > before.txt
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { BUILT_IN_SCENARIOS } from '../src/sim/scenarios.js';

interface SweepJson {
  perSeed: { seed: number; strategy: string; restarts: number; eventLogSha256: string }[];
}

const main = fileURLToPath(new URL('../src/cli/main.ts', import.meta.url));
const withFleet = process.argv.includes('--fleet');
const lines: string[] = [];
for (const scenario of BUILT_IN_SCENARIOS) {
  if (scenario === 'fleet' && !withFleet) continue;
  for (const restarts of [0, 5]) {
    const seeds = scenario === 'fleet' ? '1' : '1..5';
    const args = ['--import', 'tsx', main, 'simulate', '--scenario', scenario, '--strategy', 'all', '--seeds', seeds, '--restarts', String(restarts), '--json'];
    // A sweep with leaks (the naive strategy leaks by design) still prints its JSON, with exit 1.
    let out: string;
    try {
      out = execFileSync(process.execPath, args, { encoding: 'utf8', maxBuffer: 256 << 20 });
    } catch (err) {
      const stdout = (err as { stdout?: string }).stdout;
      if (!stdout) throw err;
      out = stdout;
    }
    for (const r of (JSON.parse(out) as SweepJson).perSeed) {
      lines.push(`${scenario} seed=${r.seed} restarts=${restarts} ${r.strategy} ${r.eventLogSha256}`);
    }
  }
}
process.stdout.write(`${lines.sort().join('\n')}\n`);
