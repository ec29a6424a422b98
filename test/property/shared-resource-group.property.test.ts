import { describe, it } from 'vitest';
import { generatedCase, type GeneratedCase } from './generated-scenario.js';
import { assertLeakFreedom } from './leak-freedom.js';

/**
 * The generated worlds with a second cluster sharing their subscriptions and resource groups
 * (src/sim/neighbour.ts): its controller draws the same NodeClaim names, and in half the
 * worlds it is a controller not yet upgraded (the first version's names). Beside the sweep's
 * checks of both clusters (leaks by cluster and NodeClaim, stuck NodeClaims), a settled world
 * counts every write either controller made to a resource that is not its cluster's: none may be.
 */
const sharedResourceGroup = generatedCase.map((c): GeneratedCase => ({
  ...c,
  scenario: { ...c.scenario, neighbour: { clusterName: 'aks-neighbour', legacyNames: c.seed % 2 === 1 } },
}));

describe('two clusters sharing a resource group, with colliding NodeClaim names', () => {
  it('neither adopts nor deletes the other\'s resources, both settle with nothing leaked or stuck (80 worlds, on every core)', async () => {
    await assertLeakFreedom(80, 20261129, sharedResourceGroup, 'sharedResourceGroup');
  }, 1_800_000);
});
