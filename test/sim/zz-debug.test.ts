import { it } from 'vitest';
import { builtInScenario } from '../../src/sim/scenarios.js';
import { parseScenario } from '../../src/sim/scenario.js';
import { runSimulation } from '../../src/sim/simulation.js';
it('dbg', async () => {
  const base = builtInScenario('capacity-flap')!;
  const scenario = parseScenario({ ...base, arm: { ...base.arm, listLagSeconds: { appearSeconds: 40, disappearSeconds: 40 }, listPageSize: 2 } }, 'v');
  const run = await runSimulation({ scenario, seed: 8, strategy: 'machine', hours: 1, restarts: 3, keepEventLog: true });
  const after = run.arm.reapAfterReservationSeconds();
  console.log(after.join(','), run.result.createFailures, run.result.nodeClaimsCreated);
  const bad = (run.arm as any).reapRecords?.() ;
  const entries = run.eventLog.entries;
  const restarts = entries.filter((e: any) => e.kind === 'controller');
  console.log(restarts.map((e: any) => `${e.t} ${e.event} ${e.detail ?? ''}`).join('\n'));
});
