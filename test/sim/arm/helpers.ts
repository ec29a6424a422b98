import { FakeArm, type ArmEvent, type FakeArmConfig } from '../../../src/sim/arm/fake-arm.js';
import { VirtualClock, SeededRandom } from '../../../src/sim/virtual-clock.js';
import { STATIC_INSTANCE_TYPES } from '../../../src/catalog/skus.js';
import { legacyNamesFor, ownershipTags, armId } from '../../../src/azure/naming.js';
import type { NicSpec, VmSpec } from '../../../src/ports/azure.js';

export const SUB = '00000000-0000-4000-8000-0000000000aa';
export const RG = 'rg-gpu';
export const SUBNET = `/subscriptions/${SUB}/resourceGroups/${RG}/providers/Microsoft.Network/virtualNetworks/vnet/subnets/nodes`;
export const H200 = 'Standard_ND96isr_H200_v5';
export const T0 = Date.UTC(2026, 0, 1);

/**
 * The fake with real ARM's defaults, except that lists are current (no list-cache lag): most
 * tests here are about one other behaviour each. The fidelity tests use the real lag.
 */
export function baseConfig(over: Partial<FakeArmConfig> = {}): FakeArmConfig {
  return {
    regions: [{ subscriptionId: SUB, location: 'eastus2', familyQuotaCores: { standardNDSH200v5Family: 192 }, regionalQuotaCores: 1000 }],
    subnets: [{ id: SUBNET, addressPrefix: '10.1.0.0/24' }],
    resourceGroups: [{ subscriptionId: SUB, name: 'other-rg' }],
    listLagSeconds: { appearSeconds: 0, disappearSeconds: 0 },
    ...over,
  };
}

export interface Harness {
  arm: FakeArm;
  clock: VirtualClock;
  events: ArmEvent[];
  /** Advance virtual time by `ms`, firing timers and letting their continuations run. */
  advance(ms: number): Promise<void>;
  /** Run the simulation (timer by timer) until `p` settles. */
  run<T>(p: Promise<T>): Promise<T>;
}

export function harness(config: FakeArmConfig = baseConfig(), seed = 1): Harness {
  const clock = new VirtualClock(T0);
  const events: ArmEvent[] = [];
  const arm = new FakeArm({ clock, random: new SeededRandom(seed), config, instanceTypes: STATIC_INSTANCE_TYPES, onEvent: (e) => events.push(e) });
  return {
    arm,
    clock,
    events,
    advance: async (ms) => {
      await clock.runUntil(clock.now() + ms);
      await flush();
    },
    run: async <T>(p: Promise<T>): Promise<T> => {
      const o = observe(p);
      await flush();
      while (!o.done) {
        const next = clock.peek();
        if (next === undefined) throw new Error('simulation idle but the promise never settled');
        await clock.runUntil(next);
        await flush();
      }
      return p;
    },
  };
}

export function flush(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** Observes a promise without letting a rejection go unhandled. */
export interface Observed<T> {
  done: boolean;
  value?: T;
  error?: unknown;
}
export function observe<T>(p: Promise<T>): Observed<T> {
  const o: Observed<T> = { done: false };
  p.then(
    (v) => {
      o.done = true;
      o.value = v;
    },
    (e: unknown) => {
      o.done = true;
      o.error = e;
    },
  );
  return o;
}

export function ref(name: string, resourceGroup = RG): { subscriptionId: string; resourceGroup: string; name: string } {
  return { subscriptionId: SUB, resourceGroup, name };
}

export function nicSpec(claim: string, over: Partial<NicSpec> = {}): NicSpec {
  return { ref: ref(legacyNamesFor(claim).nic), location: 'eastus2', subnetId: SUBNET, tags: ownershipTags('c1', 'gpu', claim, 'h200', T0), ...over };
}

export function nicId(claim: string): string {
  return armId(ref(legacyNamesFor(claim).nic), 'Microsoft.Network/networkInterfaces');
}

export function vmSpec(claim: string, over: Partial<VmSpec> = {}): VmSpec {
  return {
    ref: ref(legacyNamesFor(claim).vm),
    location: 'eastus2',
    vmSize: H200,
    nicId: nicId(claim),
    osDiskName: legacyNamesFor(claim).osDisk,
    osDiskSizeGB: 256,
    image: { reference: { publisher: 'microsoft-dsvm', offer: 'ubuntu-hpc', sku: '2204', version: 'latest' } },
    adminUsername: 'azureuser',
    sshPublicKeys: ['ssh-ed25519 AAAA test'],
    customData: 'H4sIAAAAAAAA/secret-bootstrap-token',
    priority: 'Regular',
    tags: ownershipTags('c1', 'gpu', claim, 'h200', T0),
    ...over,
  };
}
