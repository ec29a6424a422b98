/**
 * NodePool limits as a pass counts them: what a NodeClaim's options may hold against them.
 * The `nodes` limit counts NodeClaims: each one is a node, whatever size it comes up as.
 */
import type { Resources } from '../resources.js';
import type { Candidate } from './types.js';

const NODES = 'nodes';

function amountOf(capacity: Resources, name: string): number {
  return name === NODES ? 1 : capacity[name] ?? 0;
}

export function capacityForLimits(capacity: Resources, limits: Resources): Resources {
  const out: Resources = {};
  for (const name in limits) out[name] = amountOf(capacity, name);
  return out;
}

export function maxCapacity(options: readonly Candidate[], limits: Resources): Resources {
  const out: Resources = {};
  for (const name in limits) {
    let most = name === NODES ? 1 : 0;
    for (const option of options) most = Math.max(most, option.capacity[name] ?? 0);
    out[name] = most;
  }
  return out;
}

/** What an existing NodeClaim of known capacity holds against its pool's limits. */
export function claimLimitUsage(capacity: Resources, limits: Resources): Resources {
  return NODES in limits ? { ...capacity, [NODES]: 1 } : capacity;
}

/** fitsWithin(capacityForLimits(capacity, remaining), remaining) without the intermediate object. */
export function withinLimits(capacity: Resources, remaining: Resources): boolean {
  for (const name in remaining) {
    const amount = amountOf(capacity, name);
    if (amount > 0 && amount > remaining[name]!) return false;
  }
  return true;
}
