/**
 * Standard 5-field cron expressions (minute hour day-of-month month day-of-week, UTC), with
 * month and day names, ranges, steps and the @-macros: what Karpenter's disruption budget
 * schedules accept.
 */
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
