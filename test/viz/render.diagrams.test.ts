import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { committedDiagrams, DIAGRAMS_DIR } from '../../src/viz/render.js';

/**
 * The committed diagrams are generated from the machine definitions; when a machine changes,
 * this fails until someone regenerates them, so the pictures in docs/ never lie.
 */
describe(`committed diagrams under ${DIAGRAMS_DIR}`, async () => {
  const files = await committedDiagrams();

  it('covers both machines in svg, mermaid and dot', () => {
    expect([...files.keys()].sort()).toEqual(['nic.dot', 'nic.mmd', 'nic.svg', 'nodeclaim.dot', 'nodeclaim.mmd', 'nodeclaim.svg']);
  });

  for (const [file, expected] of files) {
    it(`${file} matches the machine definitions`, () => {
      const path = fileURLToPath(new URL(`../../${DIAGRAMS_DIR}/${file}`, import.meta.url));
      let committed: string;
      try {
        committed = readFileSync(path, 'utf8');
      } catch {
        expect.fail(`${path} is missing: run \`npx tsx scripts/gen-diagrams.ts\` and commit docs/diagrams/`);
      }
      if (committed !== expected) {
        expect.fail(`${path} is out of date with the lifecycle machines: run \`npx tsx scripts/gen-diagrams.ts\` and commit docs/diagrams/`);
      }
    });
  }
});
