import { builtInScenario } from '../src/sim/scenarios.js';
import { runSimulation } from '../src/sim/simulation.js';
const scenario = builtInScenario('quota-storm')!;
const { result } = await runSimulation({ scenario, seed: 1, strategy: 'machine', offeringsCache: false, keepEventLog: false });
console.log(result.wallSeconds, result.nodeClaimsCreated, (result.simulatedSeconds+1200)/result.wallSeconds);
