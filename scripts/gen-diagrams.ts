/**
 * Regenerates the committed diagrams under docs/diagrams/ from the machine definitions.
 * Run after changing a lifecycle machine (machine.ts under src/lifecycle/): `npx tsx scripts/gen-diagrams.ts`.
 * test/viz/render.diagrams.test.ts fails until the committed files match the code again.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { committedDiagrams, DIAGRAMS_DIR } from '../src/viz/render.js';

async function main(): Promise<void> {
  const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
  const dir = join(root, DIAGRAMS_DIR);
  mkdirSync(dir, { recursive: true });
  for (const [file, content] of await committedDiagrams()) {
    writeFileSync(join(dir, file), content);
    process.stdout.write(`wrote ${join(DIAGRAMS_DIR, file)}\n`);
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
