import fc from 'fast-check';

/**
 * Re-seeding the property tests from outside, the fast-check way: fast-check's global
 * parameters, set here for every test file (vitest `setupFiles`) from the environment.
 *
 *   AZFLEX_PROPERTY_SEED=42 npx vitest run test/property     # another seed for every property
 *   AZFLEX_PROPERTY_RUNS=1000 …                             # more (or fewer) runs each
 *   AZFLEX_PROPERTY_SEED=42 AZFLEX_PROPERTY_PATH=17:3 …     # replay the counterexample fast-check printed
 *
 * A property without its own seed or run count takes these as they are; the properties of
 * test/property pin a default seed (stable coverage checks) and take these over it through
 * `propertyParams`. Unset, fast-check's defaults apply (100 runs, a fresh seed each time),
 * and a failure prints the seed and path to put here.
 */
const env = (name: string, pattern: RegExp): string | undefined => {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return undefined;
  if (!pattern.test(raw)) throw new Error(`${name}="${raw}": expected ${pattern.source}`);
  return raw;
};
const seed = env('AZFLEX_PROPERTY_SEED', /^-?\d{1,10}$/);
const numRuns = env('AZFLEX_PROPERTY_RUNS', /^[1-9]\d{0,6}$/);
const path = env('AZFLEX_PROPERTY_PATH', /^\d+(:\d+)*$/);
fc.configureGlobal({
  ...fc.readConfigureGlobal(),
  // fast-check seeds are 32-bit integers: bring any decimal into that range as it does (seed | 0).
  ...(seed !== undefined ? { seed: Number(seed) | 0 } : {}),
  ...(numRuns !== undefined ? { numRuns: Number(numRuns) } : {}),
  ...(path !== undefined ? { path } : {}),
});
