import { describe, expect, it } from 'vitest';
import { allowedDisruptions, budgetAllowance, isBudgetActive } from '../../src/disruption/budgets.js';

const at = (s: string): number => Date.parse(s);

describe('budget allowance', () => {
  it('rounds percentages up and reads absolute counts', () => {
    expect(budgetAllowance({ nodes: '10%' }, 25)).toBe(3);
    expect(budgetAllowance({ nodes: '10%' }, 1)).toBe(1);
    expect(budgetAllowance({ nodes: '0%' }, 100)).toBe(0);
    expect(budgetAllowance({ nodes: '5' }, 100)).toBe(5);
    expect(budgetAllowance({ nodes: 'lots' }, 100)).toBe(0);
  });

  it('takes the minimum over budgets that apply to the reason, minus nodes already disrupting', () => {
    const budgets = [{ nodes: '50%' }, { nodes: '1', reasons: ['Drifted' as const] }];
    expect(allowedDisruptions(budgets, 'Drifted', 10, 0, 0)).toBe(1);
    expect(allowedDisruptions(budgets, 'Empty', 10, 0, 0)).toBe(5);
    expect(allowedDisruptions(budgets, 'Empty', 10, 4, 0)).toBe(1);
    expect(allowedDisruptions(budgets, 'Empty', 10, 7, 0)).toBe(0);
    expect(allowedDisruptions([{ nodes: '1', reasons: ['Drifted'] }], 'Empty', 10, 0, 0)).toBe(Number.POSITIVE_INFINITY);
    expect(allowedDisruptions([], 'Empty', 30, 0, 0)).toBe(3);
  });
});

describe('scheduled budgets', () => {
  it('is active only within duration after a firing', () => {
    const businessHours = { nodes: '0', schedule: '0 9 * * mon-fri', duration: '8h' };
    expect(isBudgetActive(businessHours, at('2026-01-05T12:00:00Z'))).toBe(true);
    expect(isBudgetActive(businessHours, at('2026-01-05T17:00:00Z'))).toBe(false);
    expect(isBudgetActive(businessHours, at('2026-01-05T08:59:00Z'))).toBe(false);
    expect(isBudgetActive(businessHours, at('2026-01-03T12:00:00Z'))).toBe(false); // Saturday
    expect(allowedDisruptions([businessHours, { nodes: '10%' }], 'Drifted', 10, 0, at('2026-01-05T12:00:00Z'))).toBe(0);
    expect(allowedDisruptions([businessHours, { nodes: '10%' }], 'Drifted', 10, 0, at('2026-01-05T20:00:00Z'))).toBe(1);
  });
});
