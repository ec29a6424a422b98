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
import { durationOrNever } from '../utils/duration.js';

export type DisruptionReason = 'Empty' | 'Drifted' | 'Underutilized';

const MINUTE_MS = 60_000;
/** Longest window scanned for a schedule firing; budgets with longer durations are capped. */
const MAX_SCAN_MINUTES = 31 * 24 * 60;

const MACROS: Record<string, string> = {
  '@yearly': '0 0 1 1 *', '@annually': '0 0 1 1 *', '@monthly': '0 0 1 * *', '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *', '@midnight': '0 0 * * *', '@hourly': '0 * * * *',
};
const MONTH_NAMES = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const DAY_NAMES = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];

export class CronError extends Error {
  override readonly name = 'CronError';
}

/** A parsed 5-field cron expression: the allowed values of each field. */
export interface CronSchedule {
  minutes: ReadonlySet<number>;
  hours: ReadonlySet<number>;
  daysOfMonth: ReadonlySet<number>;
  months: ReadonlySet<number>;
  daysOfWeek: ReadonlySet<number>;
  /** Standard cron: when both day fields are restricted, either may match. */
  dayOfMonthRestricted: boolean;
  dayOfWeekRestricted: boolean;
}

function parseValue(token: string, names: readonly string[] | undefined, offset: number): number {
  const named = names?.indexOf(token.toLowerCase()) ?? -1;
  if (named >= 0) return named + offset;
  if (!/^\d+$/.test(token)) throw new CronError(`invalid cron value "${token}"`);
  return Number(token);
}

function parseField(field: string, min: number, max: number, names?: readonly string[], offset = 0): Set<number> {
  const values = new Set<number>();
  for (const part of field.split(',')) {
    const [range, stepText] = part.split('/');
    const step = stepText === undefined ? 1 : Number(stepText);
    if (!Number.isInteger(step) || step < 1) throw new CronError(`invalid cron step in "${part}"`);
    let lo: number;
    let hi: number;
    if (range === '*' || range === '?') {
      lo = min;
      hi = max;
    } else {
      const [a, b] = range!.split('-');
      lo = parseValue(a!, names, offset);
      hi = b === undefined ? (stepText === undefined ? lo : max) : parseValue(b, names, offset);
    }
    if (lo < min || hi > max || lo > hi) throw new CronError(`cron field "${field}" out of range ${min}-${max}`);
    for (let v = lo; v <= hi; v += step) values.add(v);
  }
  return values;
}

export function parseCron(expression: string): CronSchedule {
  const text = MACROS[expression.trim().toLowerCase()] ?? expression.trim();
  const fields = text.split(/\s+/);
  if (fields.length !== 5) throw new CronError(`cron "${expression}" must have 5 fields`);
  const daysOfWeek = parseField(fields[4]!, 0, 7, DAY_NAMES);
  if (daysOfWeek.has(7)) daysOfWeek.add(0); // 7 is Sunday too
  return {
    minutes: parseField(fields[0]!, 0, 59),
    hours: parseField(fields[1]!, 0, 23),
    daysOfMonth: parseField(fields[2]!, 1, 31),
    months: parseField(fields[3]!, 1, 12, MONTH_NAMES, 1),
    daysOfWeek,
    dayOfMonthRestricted: fields[2] !== '*' && fields[2] !== '?',
    dayOfWeekRestricted: fields[4] !== '*' && fields[4] !== '?',
  };
}

export function cronMatches(schedule: CronSchedule, atMs: number): boolean {
  const t = new Date(atMs);
  if (!schedule.minutes.has(t.getUTCMinutes()) || !schedule.hours.has(t.getUTCHours()) || !schedule.months.has(t.getUTCMonth() + 1)) return false;
  const dom = schedule.daysOfMonth.has(t.getUTCDate());
  const dow = schedule.daysOfWeek.has(t.getUTCDay());
  if (schedule.dayOfMonthRestricted && schedule.dayOfWeekRestricted) return dom || dow;
  return dom && dow;
}

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
