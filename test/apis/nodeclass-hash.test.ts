import { describe, expect, it } from 'vitest';
import { driftHash, isNodeClaimDrifted, nodeClassHash } from '../../src/apis/nodeclass-hash.js';
import { ANNOTATION_NODECLASS_HASH, ANNOTATION_NODECLASS_HASH_VERSION } from '../../src/apis/well-known.js';
import type { AzureFlexNodeClassSpec } from '../../src/ports/cluster.js';
import { nodeClaimObject, SUB } from '../k8s/fixtures.js';
import { nodeClass, spec, subnet } from './nodeclass-spec.js';

describe('drift hash', () => {
  it('is a stable SHA-256 hex, independent of tag and ssh key order', () => {
    const a = driftHash(spec({ tags: { a: '1', b: '2' }, sshPublicKeys: ['ssh-ed25519 AAA x', 'ssh-rsa BBB y'] }));
    const b = driftHash(spec({ tags: { b: '2', a: '1' }, sshPublicKeys: ['ssh-rsa BBB y', 'ssh-ed25519 AAA x'] }));
    expect(a).toMatch(/^[0-9a-f]{64}$/);
    expect(a).toBe(b);
  });

  it('ignores ARM-name case but changes with every field that shapes the VM', () => {
    const base = driftHash(spec());
    expect(driftHash(spec({ resourceGroup: 'RG-FLEX', subnetID: subnet.toUpperCase() }))).toBe(base);
    const variants: Array<Partial<AzureFlexNodeClassSpec>> = [
      { location: 'westus3' },
      { subnetID: subnet.replace('nodes', 'other') },
      { imageReference: { publisher: 'microsoft-dsvm', offer: 'ubuntu-hpc', sku: '2204', version: '1.0.0' } },
      { imageReference: undefined, imageID: `/subscriptions/${SUB}/resourceGroups/i/providers/Microsoft.Compute/images/x` },
      { subscriptionID: '99999999-1111-2222-3333-444455556666' },
      { resourceGroup: 'other' },
      { securityType: 'TrustedLaunch' },
      { osDiskSizeGB: 256 },
      { maxPodsPerNode: 50 },
      { tags: { a: '1' } },
      { sshPublicKeys: ['ssh-ed25519 AAA x'] },
    ];
    const hashes = variants.map((v) => driftHash(spec(v)));
    expect(new Set([base, ...hashes]).size).toBe(variants.length + 1);
  });

  it('marks a NodeClaim drifted only when its stamped hash differs (and is of our version)', () => {
    const nc = nodeClass(spec());
    const claim = nodeClaimObject('x', 'c');
    expect(isNodeClaimDrifted(claim, nc)).toBe(false);
    claim.metadata.annotations[ANNOTATION_NODECLASS_HASH] = nodeClassHash(nc);
    expect(isNodeClaimDrifted(claim, nc)).toBe(false);
    expect(isNodeClaimDrifted(claim, nodeClass(spec({ location: 'westus3' })))).toBe(true);
    claim.metadata.annotations[ANNOTATION_NODECLASS_HASH_VERSION] = 'v0';
    expect(isNodeClaimDrifted(claim, nodeClass(spec({ location: 'westus3' })))).toBe(false);
  });
});
