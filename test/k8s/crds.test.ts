import * as path from 'node:path';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { stringify } from 'yaml';
import { adminRequest, kubectl } from './harness.js';

const info = inject('k8s');
/** Ours; the karpenter.sh CRDs on this API server are upstream's (test/k8s/global-setup.ts). */
const nodeClassCrd = path.resolve(import.meta.dirname, '../../crds/flex.aks.azure.com_azureflexnodeclasses.yaml');
const SUB = '0b3b0b3b-1111-2222-3333-444455556666';
const OTHER_SUB = '99999999-1111-2222-3333-444455556666';

function nodeClass(name: string, spec: Record<string, unknown>): Record<string, unknown> {
  return { apiVersion: 'flex.aks.azure.com/v1alpha1', kind: 'AzureFlexNodeClass', metadata: { name }, spec };
}

function validSpec(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    subscriptionID: SUB,
    location: 'eastus2',
    resourceGroup: 'rg-flex',
    subnetID: `/subscriptions/${SUB}/resourceGroups/rg-net/providers/Microsoft.Network/virtualNetworks/vnet/subnets/nodes`,
    imageReference: { publisher: 'microsoft-dsvm', offer: 'ubuntu-hpc', sku: '2204', version: 'latest' },
    ...overrides,
  };
}

async function dryRun(obj: Record<string, unknown>): Promise<{ ok: boolean; out: string }> {
  const r = await kubectl(info, ['apply', '--dry-run=server', '-o', 'json', '-f', '-'], stringify(obj));
  return { ok: r.code === 0, out: r.code === 0 ? r.stdout : r.stderr };
}

function nodePool(name: string, spec: Record<string, unknown>): Record<string, unknown> {
  return { apiVersion: 'karpenter.sh/v1', kind: 'NodePool', metadata: { name }, spec };
}

const goodTemplate = {
  spec: {
    nodeClassRef: { group: 'flex.aks.azure.com', kind: 'AzureFlexNodeClass', name: 'x' },
    requirements: [{ key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['Standard_D8s_v5'] }],
  },
};

describe('CRDs on a real API server', () => {
  beforeAll(async () => {
    // Re-applying is what an upgrade does; it must be idempotent.
    const r = await kubectl(info, ['apply', '--server-side', '-f', nodeClassCrd]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
  });

  it('are Established with the expected names, scope and short name', async () => {
    const crd = (await adminRequest(info, 'GET', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/azureflexnodeclasses.flex.aks.azure.com')) as {
      spec: { scope: string; names: { shortNames: string[] } };
      status: { conditions: Array<{ type: string; status: string }> };
    };
    expect(crd.spec.scope).toBe('Cluster');
    expect(crd.spec.names.shortNames).toEqual(['afnc']);
    for (const name of ['azureflexnodeclasses.flex.aks.azure.com', 'nodepools.karpenter.sh', 'nodeclaims.karpenter.sh']) {
      const c = (await adminRequest(info, 'GET', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`)) as typeof crd;
      expect(c.status.conditions.find((x) => x.type === 'Established')?.status, name).toBe('True');
      expect(c.status.conditions.find((x) => x.type === 'NonStructuralSchema')).toBeUndefined();
    }
  });

  it('accepts a valid AzureFlexNodeClass and applies the documented defaults', async () => {
    const r = await dryRun(nodeClass('defaults', validSpec()));
    expect(r.out).toContain('"kind": "AzureFlexNodeClass"');
    const obj = JSON.parse(r.out) as { spec: Record<string, unknown> };
    expect(obj.spec).toMatchObject({ securityType: 'Standard', osDiskSizeGB: 128, allocateNodePublicIP: false, maxPodsPerNode: 110 });
  });

  it('accepts imageID forms: gallery image version, managed image, community gallery', async () => {
    for (const imageID of [
      `/subscriptions/${SUB}/resourceGroups/img/providers/Microsoft.Compute/galleries/g/images/ubuntu/versions/1.0.0`,
      `/subscriptions/${SUB}/resourceGroups/img/providers/Microsoft.Compute/images/custom`,
      '/CommunityGalleries/nvidia-123/Images/h200/Versions/latest',
    ]) {
      const spec = validSpec({ imageID });
      delete spec.imageReference;
      const r = await dryRun(nodeClass('image-id', spec));
      expect(r.ok, `${imageID}: ${r.out}`).toBe(true);
    }
  });

  const rejected: Array<[string, Record<string, unknown>, RegExp]> = [
    ['both images', validSpec({ imageID: `/subscriptions/${SUB}/resourceGroups/img/providers/Microsoft.Compute/images/x` }), /exactly one of imageReference or imageID/],
    ['no image', (() => { const s = validSpec(); delete s.imageReference; return s; })(), /exactly one of imageReference or imageID/],
    ['subnet not an ARM ID', validSpec({ subnetID: 'nodes' }), /subnetID must be/],
    ['subnet of a VNet resource', validSpec({ subnetID: `/subscriptions/${SUB}/resourceGroups/rg/providers/Microsoft.Network/virtualNetworks/vnet` }), /subnetID must be/],
    ['subnet in another subscription', validSpec({ subnetID: `/subscriptions/${OTHER_SUB}/resourceGroups/rg/providers/Microsoft.Network/virtualNetworks/v/subnets/s` }), /subnetID must be in subscriptionID/],
    ['subscription not a GUID', validSpec({ subscriptionID: 'my-sub' }), /subscriptionID must be a GUID/],
    ['bad imageID', (() => { const s = validSpec({ imageID: '/subscriptions/x/images/y' }); delete s.imageReference; return s; })(), /imageID must be/],
    ['securityType outside enum', validSpec({ securityType: 'Insecure' }), /securityType/],
    ['tiny OS disk', validSpec({ osDiskSizeGB: 8 }), /osDiskSizeGB/],
    ['maxPods too high', validSpec({ maxPodsPerNode: 1000 }), /maxPodsPerNode/],
    ['not an ssh key', validSpec({ sshPublicKeys: ['hunter2'] }), /OpenSSH public key/],
    ['reserved tag', validSpec({ tags: { 'azflex.io_cluster': 'spoof' } }), /reserved/],
    ['upper-case location', validSpec({ location: 'EastUS2' }), /location/],
    ['missing subnet', (() => { const s = validSpec(); delete s.subnetID; return s; })(), /subnetID: Required value/],
  ];
  it.each(rejected)('rejects a NodeClass with %s', async (_what, spec, message) => {
    const r = await dryRun(nodeClass('bad', spec));
    expect(r.ok).toBe(false);
    expect(r.out).toMatch(message);
  });

  it('prints the Ready and ResourceGroup columns and answers to the short name', async () => {
    const name = 'crd-printer';
    const created = await kubectl(info, ['apply', '-f', '-'], stringify(nodeClass(name, validSpec())));
    expect(created.code, created.stderr).toBe(0);
    const r = await kubectl(info, ['get', 'afnc', name]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.split('\n')[0]).toMatch(/NAME\s+LOCATION\s+RESOURCEGROUP\s+READY\s+AGE/);
    expect(r.stdout).toContain('rg-flex');
    await kubectl(info, ['delete', 'afnc', name, '--wait=false']);
  });

  it('answers kubectl get karpenter (the category upstream\'s CRDs share) and kubectl explain for every field', async () => {
    const name = 'crd-explain';
    const created = await kubectl(info, ['apply', '-f', '-'], stringify(nodeClass(name, validSpec())));
    expect(created.code, created.stderr).toBe(0);
    const all = await kubectl(info, ['get', 'karpenter', '-o', 'name']);
    expect(all.code, all.stderr).toBe(0);
    expect(all.stdout).toContain(`azureflexnodeclass.flex.aks.azure.com/${name}`);
    const resources = await kubectl(info, ['api-resources', '--categories=karpenter', '-o', 'name']);
    expect(resources.stdout.trim().split('\n').sort()).toEqual(['azureflexnodeclasses.flex.aks.azure.com', 'nodeclaims.karpenter.sh', 'nodepools.karpenter.sh']);
    // Every field a user can ask about has a description (kubectl explain prints <no description> otherwise).
    type Schema = { description?: string; properties?: Record<string, Schema>; items?: Schema };
    const crd = (await adminRequest(info, 'GET', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/azureflexnodeclasses.flex.aks.azure.com')) as {
      spec: { versions: Array<{ schema: { openAPIV3Schema: Schema } }> };
    };
    const undescribed: string[] = [];
    const walk = (s: Schema, at: string): void => {
      for (const [k, v] of Object.entries(s.properties ?? {})) {
        const p = `${at}.${k}`;
        if (!v.description && !['.apiVersion', '.kind', '.metadata'].includes(p)) undescribed.push(p);
        walk(v, p);
        if (v.items?.properties) walk(v.items, `${p}[]`);
      }
    };
    walk(crd.spec.versions[0]!.schema.openAPIV3Schema, '');
    expect(undescribed).toEqual([]);
    for (const field of ['azureflexnodeclass.spec', 'afnc.spec.imageReference', 'afnc.status.conditions']) {
      const r = await kubectl(info, ['explain', field]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout, field).not.toContain('<no description>');
      expect(r.stdout, field).not.toMatch(/DESCRIPTION:\s+<empty>/);
    }
    await kubectl(info, ['delete', 'afnc', name, '--wait=false']);
  });

  it('upstream karpenter.sh/v1 validates and defaults NodePools as azflex expects', async () => {
    const ok = await dryRun(nodePool('np-ok', { template: goodTemplate }));
    expect(ok.ok, ok.out).toBe(true);
    const obj = JSON.parse(ok.out) as { spec: { disruption: Record<string, unknown>; template: { spec: { expireAfter: string } } } };
    expect(obj.spec.disruption).toEqual({ consolidateAfter: '0s', consolidationPolicy: 'WhenEmptyOrUnderutilized', budgets: [{ nodes: '10%' }] });
    expect(obj.spec.template.spec.expireAfter).toBe('720h');

    const bad: Array<[Record<string, unknown>, RegExp]> = [
      [{ template: goodTemplate, disruption: { consolidationPolicy: 'WhenUnderutilized', consolidateAfter: '1m' } }, /consolidationPolicy/],
      [{ template: { spec: { ...goodTemplate.spec, requirements: [{ key: 'kubernetes.io/hostname', operator: 'In', values: ['a'] }] } } }, /kubernetes.io\/hostname" is restricted/],
      [{ template: { spec: { ...goodTemplate.spec, requirements: [{ key: 'gpu', operator: 'In', values: [] }] } } }, /operator 'In' must have a value/],
      [{ template: { spec: { ...goodTemplate.spec, nodeClassRef: { group: 'flex.aks.azure.com', name: 'x' } } } }, /kind: Required value/],
      [{ template: goodTemplate, disruption: { consolidateAfter: '1m', budgets: [{ nodes: '10%', schedule: '@daily' }] } }, /'schedule' must be set with 'duration'/],
      [{ template: { metadata: { labels: { 'karpenter.sh/nodepool': 'x' } }, spec: goodTemplate.spec } }, /restricted/],
      [{ template: goodTemplate, weight: 0 }, /weight/],
    ];
    for (const [spec, msg] of bad) {
      const r = await dryRun(nodePool('np-bad', spec));
      expect(r.ok, JSON.stringify(spec)).toBe(false);
      expect(r.out).toMatch(msg);
    }
  });

  it("azflex's opt-in karpenter.sh copies (karpenterCRDs.install) are valid CRDs and accept what upstream's do", async () => {
    const copies = ['karpenter.sh_nodepools.yaml', 'karpenter.sh_nodeclaims.yaml'].map((f) => path.resolve(import.meta.dirname, '../../crds', f));
    // A server-side dry run validates them as an update of upstream's, without replacing them.
    const r = await kubectl(info, ['apply', '--server-side', '--force-conflicts', '--dry-run=server', ...copies.flatMap((f) => ['-f', f])]);
    expect(r.code, r.stderr).toBe(0);
    for (const f of copies) {
      const text = await (await import('node:fs/promises')).readFile(f, 'utf8');
      expect(text, f).toContain('- Gte');
      expect(text, f).toContain('- Lte');
    }
  });

  it('keeps NodeClaim spec immutable and status writable only through the subresource', async () => {
    const name = 'crd-immutable';
    await adminRequest(info, 'POST', '/apis/karpenter.sh/v1/nodeclaims', {
      apiVersion: 'karpenter.sh/v1',
      kind: 'NodeClaim',
      metadata: { name },
      spec: goodTemplate.spec,
    });
    await expect(
      adminRequest(info, 'PATCH', `/apis/karpenter.sh/v1/nodeclaims/${name}`, { spec: { taints: [{ key: 'a', effect: 'NoSchedule' }] } }),
    ).rejects.toThrow(/spec is immutable/);
    // A status field sent to the main resource is dropped (status subresource enabled).
    const patched = (await adminRequest(info, 'PATCH', `/apis/karpenter.sh/v1/nodeclaims/${name}`, { status: { nodeName: 'n1' } })) as { status?: { nodeName?: string } };
    expect(patched.status?.nodeName).toBeUndefined();
    const viaStatus = (await adminRequest(info, 'PATCH', `/apis/karpenter.sh/v1/nodeclaims/${name}/status`, { status: { nodeName: 'n1' } })) as { status?: { nodeName?: string } };
    expect(viaStatus.status?.nodeName).toBe('n1');
    await adminRequest(info, 'DELETE', `/apis/karpenter.sh/v1/nodeclaims/${name}`);
  });
});
