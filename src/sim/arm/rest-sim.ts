import { z } from 'zod';
import type { VirtualClock } from '../virtual-clock.js';
import type { FakeArm } from './fake-arm.js';
import { parseBody } from './rest-bodies.js';
import { HttpError, json, requireMethod } from './rest-errors.js';
import type { Json } from './rest-shapes.js';
import type { ArmHttpResponse } from './rest-http.js';
import type { ArmFault } from './types.js';

const FaultSchema: z.ZodType<ArmFault> = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('quota'), location: z.string(), subscriptionId: z.string().optional(), family: z.string().optional(), cores: z.number().int().nonnegative() }),
  z.object({ kind: z.literal('capacity'), location: z.string(), subscriptionId: z.string().optional(), allocationFailureRate: z.number().min(0).max(1).optional(), zonalAllocationFailureRate: z.number().min(0).max(1).optional(), overconstrainedAllocationFailureRate: z.number().min(0).max(1).optional() }),
  z.object({ kind: z.literal('computeThrottle'), location: z.string(), subscriptionId: z.string().optional(), policy: z.string().optional() }),
  z.object({ kind: z.literal('throttle'), subscriptionId: z.string().optional(), location: z.string().optional(), bucket: z.enum(['reads', 'writes', 'deletes']).optional(), drain: z.boolean().optional(), enabled: z.boolean().optional() }),
  z.object({ kind: z.literal('transient'), transientFaultRate: z.number().min(0).max(1).optional(), timeoutRate: z.number().min(0).max(1).optional() }),
  z.object({ kind: z.literal('skuUnavailable'), location: z.string(), subscriptionId: z.string().optional(), sku: z.string(), unavailable: z.boolean().optional() }),
  z.object({ kind: z.literal('spotCapacity'), location: z.string(), subscriptionId: z.string().optional(), sku: z.string().optional(), available: z.boolean() }),
  z.object({ kind: z.literal('vmAction'), location: z.string(), subscriptionId: z.string().optional(), sku: z.string().optional(), action: z.enum(['deallocate', 'powerOff', 'delete']), fraction: z.number().min(0).max(1) }),
  z.object({ kind: z.literal('spotEviction'), location: z.string(), subscriptionId: z.string().optional(), sku: z.string().optional(), evictFraction: z.number().min(0).max(1).optional(), ratePerHour: z.number().min(0).max(60).optional() }),
]);

/**
 * The longest single step of POST /_sim/clock/advance: 30 days, beyond any reservation, token
 * lifetime or retry a scenario waits out. Without a bound, `seconds=1e308` set the clock to
 * Infinity and every later answer failed.
 */
export const MAX_CLOCK_ADVANCE_SECONDS = 30 * 24 * 3600;

/** The simulator's own routes: advance the clock, read the state, inject a fault. */
export async function simRoute(arm: FakeArm, clock: VirtualClock | undefined, method: string, segs: string[], url: URL, body: string | undefined): Promise<ArmHttpResponse> {
  const path = segs.join('/');
  if (path === '_sim/clock/advance') {
    requireMethod(method, 'POST');
    if (!clock) throw new HttpError(501, 'NotImplemented', 'This fake ARM has no manual clock to advance.');
    const seconds = Number(url.searchParams.get('seconds'));
    if (!Number.isFinite(seconds) || seconds < 0 || seconds > MAX_CLOCK_ADVANCE_SECONDS) {
      throw new HttpError(400, 'InvalidParameter', `Query parameter 'seconds' must be a number from 0 to ${MAX_CLOCK_ADVANCE_SECONDS}.`);
    }
    // Each step is bounded, yet many steps could still carry the clock past what a Date can show.
    const target = clock.now() + seconds * 1000;
    if (Number.isNaN(new Date(target).getTime())) throw new HttpError(400, 'InvalidParameter', 'Advancing the clock that far leaves the range of dates ARM can show.');
    await clock.runUntil(target);
    return json(200, { t: clock.now(), now: new Date(clock.now()).toISOString() });
  }
  if (path === '_sim/state') {
    requireMethod(method, 'GET');
    const snapshot = arm.snapshot() as unknown as { [key: string]: Json };
    return json(200, {
      ...snapshot,
      armCalls: arm.armCalls(),
      reapTimesSeconds: arm.reapTimesSeconds(),
      peakSubnetIpsUsed: arm.peakSubnetIpsUsed(),
    });
  }
  if (path === '_sim/faults') {
    requireMethod(method, 'POST');
    const parsed = FaultSchema.safeParse(parseBody(body));
    if (!parsed.success) throw new HttpError(400, 'InvalidParameter', `Invalid fault: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
    try {
      arm.injectFault(parsed.data);
    } catch (err) {
      throw new HttpError(400, 'InvalidParameter', err instanceof Error ? err.message : String(err));
    }
    return json(200, { injected: parsed.data.kind });
  }
  throw new HttpError(404, 'NotFound', `No simulator route ${method} /${path}.`);
}
