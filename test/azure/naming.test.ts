import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { clusterNamesFor, legacyNamesFor, resourceNamesFor, shortHash } from '../../src/azure/naming.js';

describe('resource names', () => {
  it('carry a 6-hex hash of the cluster name: two clusters never share a name for one NodeClaim name', () => {
    const a = clusterNamesFor('gpu-abcde', 'aks-westeurope');
    const b = clusterNamesFor('gpu-abcde', 'aks-eastus2');
    expect(a).toEqual({ vm: `azflex-${shortHash('aks-westeurope', 6)}-gpu-abcde`, nic: `${a.vm}-nic`, osDisk: `${a.vm}-osdisk` });
    expect(b.vm).not.toBe(a.vm);
    expect(clusterNamesFor('gpu-abcde', 'aks-westeurope')).toEqual(a);
  });

  it("keep the first version's names for what it created: azflex-<nodeclaim>", () => {
    expect(legacyNamesFor('gpu-abcde')).toEqual({ vm: 'azflex-gpu-abcde', nic: 'azflex-gpu-abcde-nic', osDisk: 'azflex-gpu-abcde-osdisk' });
    expect(resourceNamesFor('gpu-abcde', 'legacy')).toEqual(legacyNamesFor('gpu-abcde'));
  });

  it('are valid Linux VM names and hostnames, deterministic and distinct per NodeClaim name (a DNS subdomain), however long', () => {
    const nodeClaimName = fc.stringMatching(/^[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?$/);
    fc.assert(fc.property(nodeClaimName, nodeClaimName, fc.string({ minLength: 1, maxLength: 63 }), (x, y, cluster) => {
      const n = clusterNamesFor(x, cluster);
      expect(n.vm).toMatch(/^[a-z0-9-]{1,64}$/);
      expect(n.vm.endsWith('-')).toBe(false);
      expect(clusterNamesFor(x, cluster)).toEqual(n);
      // '.' and '-' read alike in a name (the first version's rule too).
      if (x.replace(/\./g, '-') !== y.replace(/\./g, '-')) expect(clusterNamesFor(y, cluster).vm).not.toBe(n.vm);
    }), { numRuns: 300 });
  });
});
