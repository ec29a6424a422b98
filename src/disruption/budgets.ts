/**
 * Disruption budgets (karpenter.sh/v1 NodePool spec.disruption.budgets):
 *   - `nodes`: "10%" of the pool's NodeClaims (rounded up, as Karpenter does) or an absolute
 *     count; "0" blocks disruption;
 *   - `reasons`: the budget only limits these reasons (Empty, Drifted, Underutilized); none
 *     listed means all;
 *   - `schedule` + `duration`: the budget is only active for `duration` after each firing
 *     of the cron schedule (UTC), e.g. "0 9 * * mon-fri" + "8h" for business hours.
 * The pool's allowance for a reason is the minimum over its active budgets, minus the
 * NodeClaims already being disrupted.
 */
import type { DisruptionBudget } from '../ports/cluster.js';
import { cronMatches, parseCron, type CronSchedule } from '../utils/cron.js';
import { durationOrNever } from '../utils/duration.js';

export type DisruptionReason = 'Empty' | 'Drifted' | 'Underutilized';

const MINUTE_MS = 60_000;
/** Longest window scanned for a schedule firing; budgets with longer durations are capped. */
const MAX_SCAN_MINUTES = 31 * 24 * 60;

/** Whether the budget applies at `now`: always without a schedule, else within duration of a firing. */
export function isBudgetActive(budget: DisruptionBudget, now: number): boolean {
  if (budget.schedule === undefined) return true;
  const duration = durationOrNever(budget.duration);
  if (duration === undefined || duration <= 0) return false;
  let schedule: CronSchedule;
  try {
    schedule = parseCron(budget.schedule);
  } catch {
    // An invalid schedule is rejected by the CRD's validation; if one slips through, the
    // budget is treated as active, which can only make disruption more conservative.
    return true;
  }
  const minutes = Math.min(Math.ceil(duration / MINUTE_MS), MAX_SCAN_MINUTES);
  const latestMinute = Math.floor(now / MINUTE_MS) * MINUTE_MS;
  for (let i = 0; i < minutes; i++) {
    const firing = latestMinute - i * MINUTE_MS;
    if (now < firing + duration && cronMatches(schedule, firing)) return true;
  }
  return false;
}

/** How many NodeClaims one budget allows disrupted at once, out of `total` in the pool. */
export function budgetAllowance(budget: DisruptionBudget, total: number): number {
  const text = budget.nodes.trim();
  if (text.endsWith('%')) {
    const percent = Number(text.slice(0, -1));
    if (!Number.isFinite(percent) || percent < 0) return 0;
    return Math.ceil((total * percent) / 100);
  }
  const count = Number(text);
  // Malformed budgets block rather than allow: the safe failure for disruption.
  return Number.isInteger(count) && count >= 0 ? count : 0;
}

/**
 * How many more NodeClaims of the pool may be disrupted for `reason` right now.
 * `total` counts all the pool's NodeClaims, `disrupting` those already being deleted.
 * Karpenter's default when no budget is given is 10%.
 */
export function allowedDisruptions(
  budgets: readonly DisruptionBudget[] | undefined, reason: DisruptionReason, total: number, disrupting: number, now: number,
): number {
  const effective = budgets && budgets.length > 0 ? budgets : [{ nodes: '10%' }];
  let allowed = Number.POSITIVE_INFINITY;
  for (const budget of effective) {
    if (budget.reasons && budget.reasons.length > 0 && !budget.reasons.includes(reason)) continue;
    if (!isBudgetActive(budget, now)) continue;
    allowed = Math.min(allowed, budgetAllowance(budget, total));
  }
  if (allowed === Number.POSITIVE_INFINITY) return Number.POSITIVE_INFINITY;
  return Math.max(0, allowed - disrupting);
}
