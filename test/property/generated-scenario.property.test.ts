import fc from 'fast-check';
import { describe, it } from 'vitest';
import { parseScenario } from '../../src/sim/scenario.js';
import { generatedCase } from './generated-scenario.js';
import { propertyParams } from './params.js';

describe('the leak-freedom generator', () => {
  // Cheap (parsing only), so it covers far more worlds than the simulations do: a generator that
  // writes input the CLI refuses (it once gave two NodeClasses one subnet with two ranges) fails here.
  it('writes only scenarios `azflex simulate` accepts', () => {
    fc.assert(fc.property(generatedCase, (c) => void parseScenario(c.scenario, 'generated')), propertyParams({ numRuns: 2000, seed: 20261123 }));
  });
});
