import type { Condition } from '../ports/cluster.js';

/**
 * Sets a condition, keeping lastTransitionTime when the status did not change (so the time
 * means "since when", as Kubernetes conventions require). Returns a new array.
 */
export function setCondition(conditions: Condition[], next: Omit<Condition, 'lastTransitionTime'>, nowIso: string): Condition[] {
  const prev = conditions.find((c) => c.type === next.type);
  const lastTransitionTime = prev && prev.status === next.status && prev.lastTransitionTime ? prev.lastTransitionTime : nowIso;
  const updated: Condition = { ...next, lastTransitionTime };
  return prev ? conditions.map((c) => (c.type === next.type ? updated : c)) : [...conditions, updated];
}

export function getCondition(conditions: Condition[], type: string): Condition | undefined {
  return conditions.find((c) => c.type === type);
}

export function conditionsEqual(a: Condition[], b: Condition[]): boolean {
  if (a.length !== b.length) return false;
  return a.every((c) => {
    const o = b.find((x) => x.type === c.type);
    return !!o && o.status === c.status && o.reason === c.reason && o.message === c.message && o.lastTransitionTime === c.lastTransitionTime;
  });
}

/** Kubernetes' RFC 3339 with second precision (the API server truncates to seconds). */
export function rfc3339(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}
