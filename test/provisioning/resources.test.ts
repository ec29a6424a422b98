import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  QuantityError, copiesThatFit, fitsWithin, formatQuantity, parseQuantity, podRequests, resourcesToList,
} from '../../src/provisioning/resources.js';
import { makePod } from './fixtures.js';

describe('parseQuantity', () => {
  it('parses cpu into millicores, rounding fractions of a millicore up', () => {
    expect(parseQuantity('500m', 'cpu')).toBe(500);
    expect(parseQuantity('2', 'cpu')).toBe(2000);
    expect(parseQuantity('0.1', 'cpu')).toBe(100);
    expect(parseQuantity('1.5', 'cpu')).toBe(1500);
    expect(parseQuantity('0.0005', 'cpu')).toBe(1);
    expect(parseQuantity('250000u', 'cpu')).toBe(250);
    expect(parseQuantity('1e3', 'cpu')).toBe(1_000_000);
  });

  it('parses memory with binary and decimal suffixes into exact bytes', () => {
    expect(parseQuantity('1Gi', 'memory')).toBe(2 ** 30);
    expect(parseQuantity('512M', 'memory')).toBe(512_000_000);
    expect(parseQuantity('1.5Gi', 'memory')).toBe(1.5 * 2 ** 30);
    expect(parseQuantity('128974848', 'memory')).toBe(128974848);
    expect(parseQuantity('129e6', 'memory')).toBe(129_000_000);
    expect(parseQuantity('123Mi', 'memory')).toBe(123 * 2 ** 20);
    expect(parseQuantity('1850Gi', 'memory')).toBe(1850 * 2 ** 30);
    expect(parseQuantity('0.5', 'memory')).toBe(1);
  });

  it('parses extended resources as counts', () => {
    expect(parseQuantity('8', 'nvidia.com/gpu')).toBe(8);
    expect(parseQuantity('110', 'pods')).toBe(110);
  });

  it('agrees between the fast integer path and the exact decimal path', () => {
    // "N.0<suffix>" cannot take the fast path, so it checks it against the BigInt parser.
    fc.assert(fc.property(
      fc.integer({ min: 0, max: 10 ** 9 }), fc.constantFrom('', 'm', 'k', 'M', 'G', 'Ki', 'Mi', 'Gi', 'Ti'), fc.constantFrom('cpu', 'memory', 'nvidia.com/gpu'),
      (n, suffix, resource) => {
        let fast: number | Error;
        let exact: number | Error;
        try { fast = parseQuantity(`${n}${suffix}`, resource); } catch (e) { fast = e as Error; }
        try { exact = parseQuantity(`${n}.0${suffix}`, resource); } catch (e) { exact = e as Error; }
        if (fast instanceof Error || exact instanceof Error) expect(fast instanceof Error && exact instanceof Error).toBe(true);
        else expect(fast).toBe(exact);
      },
    ), { numRuns: 500 });
  });

  it('rejects malformed and overly large quantities', () => {
    expect(() => parseQuantity('abc', 'memory')).toThrow(QuantityError);
    expect(() => parseQuantity('1Xi', 'memory')).toThrow(QuantityError);
    expect(() => parseQuantity('', 'cpu')).toThrow(QuantityError);
    expect(() => parseQuantity('100Ei', 'memory')).toThrow(QuantityError);
  });

  it('formats back to strings that parse to the same value', () => {
    for (const [q, name] of [['500m', 'cpu'], ['3', 'cpu'], ['1Gi', 'memory'], ['1536Mi', 'memory'], ['1000', 'memory'], ['8', 'nvidia.com/gpu']] as const) {
      const value = parseQuantity(q, name);
      expect(parseQuantity(formatQuantity(value, name), name)).toBe(value);
    }
    expect(formatQuantity(2000, 'cpu')).toBe('2');
    expect(formatQuantity(1536 * 2 ** 20, 'memory')).toBe('1536Mi');
  });
});

describe('podRequests', () => {
  it('takes max(largest init container, sum of containers) per resource, plus overhead and one pod slot', () => {
    const pod = makePod('p', {
      containers: [{ cpu: '1', memory: '1Gi' }, { cpu: '500m', memory: '1Gi', 'nvidia.com/gpu': '1' }],
      initContainers: [{ cpu: '2', memory: '512Mi' }, { cpu: '100m', memory: '4Gi' }],
      overhead: { cpu: '250m', memory: '128Mi' },
    });
    expect(podRequests(pod)).toEqual({ cpu: 2250, memory: 4 * 2 ** 30 + 128 * 2 ** 20, 'nvidia.com/gpu': 1, pods: 1 });
  });

  it('formats summed requests as a ResourceList', () => {
    expect(resourcesToList({ cpu: 1500, memory: 2 ** 31, pods: 3 })).toEqual({ cpu: '1500m', memory: '2Gi', pods: '3' });
  });
});

describe('fit arithmetic', () => {
  it('counts copies that fit and treats absent capacity as zero', () => {
    expect(copiesThatFit({ cpu: 1000, pods: 1 }, { cpu: 500 }, { cpu: 4000, pods: 10 })).toBe(3);
    expect(copiesThatFit({ 'nvidia.com/gpu': 1 }, {}, { cpu: 4000 })).toBe(0);
    expect(fitsWithin({ cpu: 0, memory: 10 }, { memory: 10 })).toBe(true);
    expect(fitsWithin({ memory: 11 }, { memory: 10 })).toBe(false);
  });
});
