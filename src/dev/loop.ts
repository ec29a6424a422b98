/**
 * A non-overlapping poll loop on real timers (src/dev runs in wall time: it stands in for
 * the kubelet and kube-controller-manager of a real cluster, not for code under test).
 */
export interface PollLoop {
  stop(): Promise<void>;
}

export function pollLoop(everyMs: number, tick: () => Promise<void>, onError: (e: unknown) => void): PollLoop {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let current: Promise<void> = Promise.resolve();
  const run = (): void => {
    timer = undefined;
    current = tick()
      .catch(onError)
      .finally(() => {
        if (!stopped) timer = setTimeout(run, everyMs);
      });
  };
  timer = setTimeout(run, 0);
  return {
    stop: async () => {
      stopped = true;
      if (timer) clearTimeout(timer);
      await current;
    },
  };
}
