import { RealClock } from '../platform/real-clock.js';
import { PeriodicLoop } from '../utils/periodic-loop.js';

export interface PollerOptions {
  /** Default 500 ms: quick enough that `kubectl get -w` never seems stuck. */
  pollMs?: number;
  onError?: (e: unknown) => void;
}

/**
 * A cluster component `azflex dev` stands in for (node registration, disk provisioner): one
 * `tick()` every `pollMs` of wall time on the one periodic-loop helper, so ticks never
 * overlap and stop() waits for the one in flight.
 */
export abstract class DevPoller {
  private loop: PeriodicLoop | undefined;

  protected constructor(
    private readonly loopName: string,
    private readonly poll: PollerOptions,
  ) {}

  start(): void {
    this.loop ??= new PeriodicLoop({
      name: this.loopName,
      clock: new RealClock(),
      intervalMs: this.poll.pollMs ?? 500,
      initialDelayMs: 0,
      run: () => this.tick(),
      ...(this.poll.onError ? { onError: this.poll.onError } : {}),
    }).start();
  }

  async stop(): Promise<void> {
    await this.loop?.stop();
    this.loop = undefined;
  }

  abstract tick(): Promise<void>;
}
