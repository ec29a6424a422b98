import type { NodeClaim } from '../ports/cluster.js';
import { ANNOTATION_VM_ATTEMPT_AT } from './well-known.js';

/** Read on every resync for every NodeClaim and NIC; NodeClaim objects are replaced, never changed, so remembered per object. */
const attemptAtOf = new WeakMap<NodeClaim, number | undefined>();

/** When the launch last sent (or was about to send) the NodeClaim's VM PUT: the annotation it writes first. */
export function vmAttemptAt(nc: NodeClaim): number | undefined {
  if (attemptAtOf.has(nc)) return attemptAtOf.get(nc);
  const raw = nc.metadata.annotations[ANNOTATION_VM_ATTEMPT_AT];
  const t = raw ? Date.parse(raw) : NaN;
  const at = Number.isFinite(t) ? t : undefined;
  attemptAtOf.set(nc, at);
  return at;
}
