import type { Runtime } from '../runtime/controller.js';
import type { LogEntry } from '../runtime/event-log.js';
import type { AzflexMetrics, KarpenterMetrics } from './karpenter.js';

/**
 * Turns the runtime's event log into Prometheus metrics: NICs by machine state, NICs
 * reaped, VM create failures by code, NodeClaims terminated, and ownerless NICs the sweep
 * has adopted (the would-be leaks).
 */
export function runtimeMetricsListener(
  azflex: AzflexMetrics,
  karpenter: KarpenterMetrics,
): (entry: LogEntry) => void {
  return (e) => {
    if (e.kind === 'transition' && e.actor.startsWith('nic/') && e.to === 'reaped') {
      azflex.nicsReaped.inc({ reason: e.from === 'deleting' ? 'deleted' : 'cascade' });
    }
    if (e.kind === 'transition' && e.actor.startsWith('nodeclaim/') && e.to === 'deleted') {
      karpenter.nodeClaimsTerminated.inc({ nodepool: nodePoolOf(e.actor) });
    }
    if (e.kind === 'effect' && e.event === 'createVm' && e.detail !== 'ok') {
      azflex.vmCreateFailures.inc({ code: e.detail ?? 'Unknown', sku: '', region: '' });
    }
  };
}

/** Gauges that are a function of the live actors: refreshed before each scrape. */
export function refreshActorGauges(runtime: Runtime, azflex: AzflexMetrics): void {
  azflex.nics.reset();
  for (const state of runtime.actorStates().nics.values()) azflex.nics.inc({ state });
  azflex.nicsLeaked.set(runtime.orphanNics());
}

/** NodeClaim names are `<nodepool>-<5 chars>` (Karpenter's convention). */
function nodePoolOf(actor: string): string {
  const name = actor.slice(actor.indexOf('/') + 1);
  return name.replace(/-[a-z0-9]{5}$/, '');
}
