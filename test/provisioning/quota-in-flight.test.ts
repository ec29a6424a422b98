import { describe, expect, it } from 'vitest';
import { inFlightCores } from '../../src/provisioning/quota-in-flight.js';
import { STATIC_INSTANCE_TYPES } from '../../src/catalog/skus.js';
import { ANNOTATION_VM_ATTEMPT_AT } from '../../src/apis/well-known.js';
import type { NodeClaim } from '../../src/ports/cluster.js';
import { T0, makeNodeClaim } from './fixtures.js';

const D8 = STATIC_INSTANCE_TYPES.find((t) => t.name === 'Standard_D8s_v5')!;
const READ_AT = T0 + 60_000;
const iso = (ms: number): string => new Date(ms).toISOString();

/** A D8 NodeClaim: its VM PUT attempted at `attemptAt` (none: not sent yet), optionally launched at `launchedAt` or failed. */
function claim(name: string, o: { attemptAt?: number; launchedAt?: number; failed?: boolean } = {}): NodeClaim {
  const c = makeNodeClaim(name, {
    nodePool: 'p',
    instanceTypes: [D8.name],
    ...(o.launchedAt !== undefined ? { launchedAs: D8.name } : {}),
    annotations: o.attemptAt !== undefined ? { [ANNOTATION_VM_ATTEMPT_AT]: iso(o.attemptAt) } : {},
    conditions: o.launchedAt !== undefined
      ? [{ type: 'Launched', status: 'True', lastTransitionTime: iso(o.launchedAt), reason: 'Launched', message: '' }]
      : o.failed ? [{ type: 'Launched', status: 'False', lastTransitionTime: iso(READ_AT), reason: 'AllocationFailed', message: '' }] : [],
  });
  if (o.launchedAt !== undefined) c.status.providerID = `azure:///x/${name}`;
  return c;
}

const cores = (claims: NodeClaim[]): number => inFlightCores(claims, STATIC_INSTANCE_TYPES, READ_AT).regional;

describe('inFlightCores', () => {
  it('counts a NodeClaim whose VM PUT was not sent yet, or was sent after the reading', () => {
    expect(cores([claim('unsent')])).toBe(D8.vcpu);
    expect(cores([claim('after', { attemptAt: READ_AT + 1000 })])).toBe(D8.vcpu);
  });

  it('does not count a VM created before the reading that the NodeClaim does not show as launched yet (a crash between the PUT and the status write)', () => {
    // The usage reading already holds these cores: counting them too would subtract them twice until the next read.
    expect(cores([claim('crashed', { attemptAt: READ_AT - 30_000 })])).toBe(0);
  });

  it('does not count a VM created before the reading whose Launched condition was written after it (a restarted controller records it late)', () => {
    expect(cores([claim('late', { attemptAt: READ_AT - 30_000, launchedAt: READ_AT + 120_000 })])).toBe(0);
    expect(cores([claim('fresh', { attemptAt: READ_AT + 5_000, launchedAt: READ_AT + 120_000 })])).toBe(D8.vcpu);
  });

  it('without an attempt time, the Launched condition decides (launched after the reading: in flight)', () => {
    const late = claim('legacy', { launchedAt: READ_AT + 1000 });
    expect(cores([late])).toBe(D8.vcpu);
    expect(cores([claim('legacy-old', { launchedAt: READ_AT - 1000 })])).toBe(0);
  });

  it('does not count a NodeClaim whose launch failed: its VM holds no cores', () => {
    expect(cores([claim('failed', { attemptAt: READ_AT + 1000, failed: true })])).toBe(0);
  });
});
