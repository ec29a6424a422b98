import { describe, expect, it } from 'vitest';
import { TAG, clusterNamesFor, legacyNamesFor } from '../../src/azure/naming.js';
import { classifyAzureError } from '../../src/azure/errors.js';
import type { Disk, Nic, Vm } from '../../src/ports/azure.js';
import { assertOwned, nicNameCandidates, ours, resourceNamesOf, type TaggedView } from '../../src/lifecycle/ownership.js';

const CLUSTER = 'aks-a';
const tags = (cluster: string | undefined, nodeClaim: string | undefined): Record<string, string> => ({
  ...(cluster !== undefined ? { [TAG.cluster]: cluster } : {}),
  ...(nodeClaim !== undefined ? { [TAG.nodeClaim]: nodeClaim } : {}),
});
const id = (name: string): string => `/subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/virtualMachines/${name}`;
const vm = (name: string, t: Record<string, string>): Vm => ({ id: id(name), name, tags: t } as Vm);
const view = (vms: Vm[] = [], nics: Nic[] = [], disks: Disk[] = []): TaggedView => ({
  vms: new Map(vms.map((v) => [v.name, v])),
  nics: new Map(nics.map((n) => [n.name, n])),
  disks: new Map(disks.map((d) => [d.name, d])),
});

describe('resourceNamesOf: which names a NodeClaim has', () => {
  it("is the cluster's names, unless the view shows a resource of the first version's names tagged with the NodeClaim", () => {
    expect(resourceNamesOf(view(), { clusterName: CLUSTER }, 'gpu-1')).toEqual(clusterNamesFor('gpu-1', CLUSTER));
    expect(resourceNamesOf(undefined, { clusterName: CLUSTER }, 'gpu-1')).toEqual(clusterNamesFor('gpu-1', CLUSTER));
    const legacy = legacyNamesFor('gpu-1');
    expect(resourceNamesOf(view([vm(legacy.vm, tags(CLUSTER, 'gpu-1'))]), { clusterName: CLUSTER }, 'gpu-1')).toEqual(legacy);
    // Only the disk is left (the VM and NIC went first): still the first version's names, so the disk is reaped under its own.
    expect(resourceNamesOf(view([], [], [{ name: legacy.osDisk, tags: tags(CLUSTER, 'gpu-1') } as Disk]), { clusterName: CLUSTER }, 'gpu-1')).toEqual(legacy);
    // A resource of the name that another NodeClaim's tag claims is not this one's.
    expect(resourceNamesOf(view([vm(legacy.vm, tags(CLUSTER, 'other'))]), { clusterName: CLUSTER }, 'gpu-1')).toEqual(clusterNamesFor('gpu-1', CLUSTER));
  });

  it("is always the first version's under legacyNames (the simulator's not-yet-upgraded cluster)", () => {
    expect(resourceNamesOf(view(), { clusterName: CLUSTER, legacyNames: true }, 'gpu-1')).toEqual(legacyNamesFor('gpu-1'));
    expect(nicNameCandidates({ clusterName: CLUSTER, legacyNames: true }, 'gpu-1')).toEqual([legacyNamesFor('gpu-1').nic]);
    expect(nicNameCandidates({ clusterName: CLUSTER }, 'gpu-1')).toEqual([clusterNamesFor('gpu-1', CLUSTER).nic, legacyNamesFor('gpu-1').nic]);
  });
});

describe('ownership', () => {
  it("takes a resource as the NodeClaim's only when both tags say so", () => {
    expect(ours(vm('x', tags(CLUSTER, 'gpu-1')), CLUSTER, 'gpu-1')).toBeDefined();
    expect(ours(vm('x', tags('aks-b', 'gpu-1')), CLUSTER, 'gpu-1')).toBeUndefined();
    expect(ours(vm('x', tags(CLUSTER, 'gpu-2')), CLUSTER, 'gpu-1')).toBeUndefined();
    expect(ours(vm('x', {}), CLUSTER, 'gpu-1')).toBeUndefined();
    expect(ours(undefined, CLUSTER, 'gpu-1')).toBeUndefined();
  });

  it('refuses another cluster\'s or an untagged resource with a conflict that names it and its owner, classified as a launch that cannot succeed', () => {
    expect(() => assertOwned(vm('x', tags(CLUSTER, 'gpu-1')), 'VM', CLUSTER, 'gpu-1')).not.toThrow();
    const foreign = (() => {
      try {
        assertOwned(vm('azflex-gpu-1', tags('aks-b', 'gpu-1')), 'VM', CLUSTER, 'gpu-1');
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(foreign).toMatchObject({ code: 'ResourceNameConflict', statusCode: 409 });
    expect((foreign as Error).message).toContain(id('azflex-gpu-1'));
    expect((foreign as Error).message).toContain(`${TAG.cluster}=aks-b`);
    expect(classifyAzureError(foreign)).toEqual({ kind: 'conflict', code: 'ResourceNameConflict' });
    expect(() => assertOwned(vm('azflex-gpu-1', {}), 'NIC', CLUSTER, 'gpu-1')).toThrow(/NIC .* \(no azflex cluster tag; this cluster is aks-a\)/);
  });
});
