import type { Clock } from '../ports/clock.js';
import { errorMessage } from '../utils/error-message.js';

/**
 * Graceful shutdown on SIGTERM/SIGINT: run the steps in order (fence ARM writes first,
 * then stop controllers, release the lease, stop informers), each bounded by the overall
 * deadline, then exit. A second signal exits at once. Kubernetes sends SIGTERM and waits
 * terminationGracePeriodSeconds, so the deadline must stay below that.
 */

export interface ShutdownStep {
  name: string;
  run: () => Promise<void> | void;
}

export interface SignalSource {
  on(signal: 'SIGTERM' | 'SIGINT', fn: () => void): unknown;
  off(signal: 'SIGTERM' | 'SIGINT', fn: () => void): unknown;
}

export interface GracefulShutdownOptions {
  clock: Clock;
  steps: ShutdownStep[];
  deadlineMs?: number;
  signals?: SignalSource;
  exit?: (code: number) => void;
  log?: (msg: string) => void;
}

export interface GracefulShutdown {
  /** Resolves with the exit code once shutdown finished (whatever triggered it). */
  readonly done: Promise<number>;
  /** Trigger shutdown programmatically (same path as SIGTERM). */
  trigger(reason: string): Promise<number>;
  uninstall(): void;
}

export function installGracefulShutdown(o: GracefulShutdownOptions): GracefulShutdown {
  const signals = o.signals ?? process;
  const exit = o.exit ?? ((code: number) => process.exit(code));
  const log = o.log ?? (() => undefined);
  const deadlineMs = o.deadlineMs ?? 25_000;
  let resolveDone: (code: number) => void = () => undefined;
  const done = new Promise<number>((r) => (resolveDone = r));
  let running: Promise<number> | undefined;

  const runSteps = async (reason: string): Promise<number> => {
    log(`shutting down (${reason})`);
    let code = 0;
    const deadline = new Promise<'deadline'>((resolve) => o.clock.setTimer(deadlineMs, () => resolve('deadline')));
    for (const step of o.steps) {
      try {
        const r = await Promise.race([Promise.resolve(step.run()).then(() => 'ok' as const), deadline]);
        if (r === 'deadline') {
          log(`shutdown deadline of ${deadlineMs}ms hit during "${step.name}"`);
          code = 1;
          break;
        }
      } catch (e) {
        log(`shutdown step "${step.name}" failed: ${errorMessage(e)}`);
        code = 1;
      }
    }
    return code;
  };

  const trigger = (reason: string): Promise<number> => {
    if (running) return running;
    running = runSteps(reason).then((code) => {
      uninstall();
      resolveDone(code);
      exit(code);
      return code;
    });
    return running;
  };

  const onSignal = (): void => {
    if (running) {
      log('second signal: exiting immediately');
      exit(1);
      return;
    }
    void trigger('signal');
  };
  const uninstall = (): void => {
    signals.off('SIGTERM', onSignal);
    signals.off('SIGINT', onSignal);
  };
  signals.on('SIGTERM', onSignal);
  signals.on('SIGINT', onSignal);
  return { done, trigger, uninstall };
}
