import { runSimulation, type SimulationOptions, type SimulationRun } from '../sim/simulation.js';
import type { PacerOptions } from './pacer.js';
import { startLiveServer, type LiveServer } from './server.js';
import { SimulationLiveSource } from './sim-source.js';

export interface LiveSimulationOptions extends PacerOptions {
  simulation: Omit<SimulationOptions, 'pace' | 'onWorld' | 'onProgress'>;
  /** 0 (the default) picks a free port. */
  port?: number;
  host?: string;
}

export interface LiveSimulation {
  server: LiveServer;
  source: SimulationLiveSource;
  /** Settles when the simulation ends (it waits on the page's controls until then). */
  run: Promise<SimulationRun>;
  /** Lets the run finish unpaced, waits for it, and closes the server. */
  stop(): Promise<SimulationRun>;
}

/** A simulation paced by the live view: `azflex simulate --ui` and the browser tests. */
export async function startLiveSimulation(options: LiveSimulationOptions): Promise<LiveSimulation> {
  const { simulation } = options;
  const source = new SimulationLiveSource({
    title: `simulate ${simulation.scenario.name} (strategy ${simulation.strategy}, seed ${simulation.seed})`,
    stepMs: options.stepMs,
    speed: options.speed,
    paused: options.paused,
  });
  const server = await startLiveServer({ source, port: options.port ?? 0, host: options.host, clusterName: simulation.scenario.clusterName });
  const run = runSimulation({ ...simulation, ...source.simulationOptions() }).then((r) => {
    source.finish();
    return r;
  });
  // Callers may only look at `run` later; a failure must not go unhandled meanwhile.
  run.catch(() => undefined);
  return {
    server,
    source,
    run,
    stop: async () => {
      source.clock.finish();
      try {
        return await run;
      } finally {
        await server.close();
      }
    },
  };
}
