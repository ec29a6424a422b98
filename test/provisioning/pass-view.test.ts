import { describe, expect, it } from 'vitest';
import { OfferingQueries, PlannedInputs, type UnavailableCheck } from '../../src/provisioning/pass-view.js';

/** Offerings ruled out now, by `sku/region/type[/zone]`. */
function unavailable(out: Set<string>): UnavailableCheck {
  return (sku, region, type, zone) => out.has([sku, region, type, ...(zone ? [zone] : [])].join('/'));
}

describe('PlannedInputs: a pass is skipped only when it would decide what the last one did', () => {
  it('nothing remembered: plan', () => {
    expect(new PlannedInputs().unchanged('k', unavailable(new Set()))).toBe(false);
  });

  it('same inputs and every offering answered as before: skip; an answer that changed, or other inputs: plan', () => {
    const out = new Set(['D8s/eastus2/spot/2']);
    const queries = new OfferingQueries(unavailable(out));
    expect(queries.isOfferingUnavailable('D8s', 'eastus2', 'on-demand')).toBe(false);
    expect(queries.isZoneUnavailable('D8s', 'eastus2', '2', 'spot')).toBe(true);
    const planned = new PlannedInputs();
    planned.remember('k', queries);
    expect(planned.unchanged('k', unavailable(out))).toBe(true);
    expect(planned.unchanged('other', unavailable(out))).toBe(false);
    // The zone's block lifted: the offering the scheduler was refused may now be planned.
    expect(planned.unchanged('k', unavailable(new Set()))).toBe(false);
    planned.forget();
    expect(planned.unchanged('k', unavailable(out))).toBe(false);
  });
});
