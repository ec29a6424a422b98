import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  ProviderIdError,
  armIdToProviderId,
  formatProviderId,
  isProviderId,
  parseProviderId,
  providerIdToArmId,
} from '../../src/azure/provider-id.js';

const chars = (alphabet: string, min: number, max: number) =>
  fc.string({ unit: fc.constantFrom(...alphabet.split('')), minLength: min, maxLength: max });
const ALNUM = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
const subscription = fc.uuid();
const resourceGroup = fc
  .tuple(chars(`${ALNUM}_.()-`, 0, 30), chars(`${ALNUM}_()-`, 1, 1))
  .map(([head, tail]) => head + tail);
const vmName = chars(`${ALNUM}._-`, 1, 64);
const ref = fc.record({ subscriptionId: subscription, resourceGroup, name: vmName });

const ARM = '/subscriptions/0a1b2c3d-0000-4000-8000-000000000001/resourceGroups/flex-h200-rg/providers/Microsoft.Compute/virtualMachines/azflex-h200-abcde';

describe('providerID', () => {
  it('round-trips losslessly: parse(format(ref)) = ref and format(parse(id)) = id', () => {
    fc.assert(
      fc.property(ref, (r) => {
        const id = formatProviderId(r);
        expect(id.startsWith('azure-flex:///subscriptions/')).toBe(true);
        expect(parseProviderId(id)).toEqual(r);
        expect(formatProviderId(parseProviderId(id))).toBe(id);
        expect(armIdToProviderId(providerIdToArmId(id))).toBe(id);
      }),
      { numRuns: 500 },
    );
  });

  it('is the ARM id behind three slashes; an empty ARM id stays empty', () => {
    expect(armIdToProviderId(ARM)).toBe(`azure-flex://${ARM}`);
    expect(providerIdToArmId(`azure-flex://${ARM}`)).toBe(ARM);
    expect(armIdToProviderId('')).toBe('');
  });

  it('rejects anything in the host position, other schemes, other providers and missing segments', () => {
    const bad = [
      '',
      'azure-flex:///',
      `azure://${ARM}`,
      `aws:///us-east-1a/i-0123`,
      `azure-flex://evil.example.com${ARM}`,
      `azure-flex://x${ARM}`,
      `azure-flex:////${ARM.slice(1)}`,
      `azure-flex://${ARM.replace('Microsoft.Compute/virtualMachines', 'Microsoft.Network/networkInterfaces')}`,
      `azure-flex://${ARM.replace('Microsoft.Compute', 'microsoft.compute')}`,
      `azure-flex://${ARM.replace('/resourceGroups/flex-h200-rg', '')}`,
      `azure-flex://${ARM}/extensions/x`,
      `azure-flex://${ARM}/`,
      `azure-flex://${ARM}?x=1`,
      `azure-flex://${ARM.replace('azflex-h200-abcde', '')}`,
      `azure-flex://${ARM.replace('azflex-h200-abcde', 'a b')}`,
      `azure-flex://${ARM.replace('flex-h200-rg', 'rg.')}`,
      ` azure-flex://${ARM}`,
    ];
    for (const id of bad) {
      expect(() => parseProviderId(id), id).toThrow(ProviderIdError);
      expect(isProviderId(id)).toBe(false);
    }
  });

  it('rejects arbitrary strings that are not formatted ids (property)', () => {
    fc.assert(
      fc.property(fc.string(), (s) => {
        if (isProviderId(s)) expect(formatProviderId(parseProviderId(s))).toBe(s);
      }),
      { numRuns: 1000 },
    );
    fc.assert(
      fc.property(ref, fc.string({ minLength: 1, maxLength: 20 }).filter((h) => !h.includes('/')), (r, host) => {
        const id = formatProviderId(r).replace('azure-flex:///', `azure-flex://${host}/`);
        expect(isProviderId(id)).toBe(false);
      }),
    );
  });
});
