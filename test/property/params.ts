import fc from 'fast-check';

/**
 * A property's parameters: its own defaults (a pinned seed keeps its coverage check stable),
 * with the global ones of test/fast-check-setup.ts (AZFLEX_PROPERTY_SEED, _RUNS, _PATH) over them.
 */
export function propertyParams<T>(defaults: { numRuns: number; seed: number }): fc.Parameters<T> & { numRuns: number; seed: number } {
  const global = fc.readConfigureGlobal() as fc.Parameters<T>;
  return { ...defaults, ...global, numRuns: global.numRuns ?? defaults.numRuns, seed: global.seed ?? defaults.seed };
}

/**
 * A coverage check ("every interesting outcome occurred") holds for the default number of runs;
 * asked for fewer, a generator may not reach them all, which says nothing about the property.
 */
export function coverageApplies(params: { numRuns: number }, defaults: { numRuns: number }): boolean {
  return params.numRuns >= defaults.numRuns;
}
