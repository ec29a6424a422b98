#!/usr/bin/env node
// Removes from an installed production node_modules the files Node never loads, so the image
// does not ship them: TypeScript declarations (read only by tsc), source maps of dependencies
// (only a debugger reads them) and the browser / React Native builds that @azure/* and
// @typespec/* publish next to their Node builds (chosen only under the "browser" or
// "react-native" export conditions). Measured on this lockfile: 261 MB → about 100 MB.
// Used by scripts/build-image.mjs and by the Dockerfile, so both images hold the same files.
//   node scripts/prune-deps.mjs <dir containing node_modules>
import { readdirSync, rmSync } from 'node:fs';
import * as path from 'node:path';

const DROP_FILE = /\.(d\.ts|d\.mts|d\.cts|map)$/;
const DROP_DIST_DIR = new Set(['browser', 'react-native']);

/** Prunes `<root>/node_modules` in place; returns how many files and directories it removed. */
export function pruneDeps(root) {
  let removed = 0;
  const walk = (dir) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) {
        if (DROP_DIST_DIR.has(e.name) && path.basename(dir) === 'dist') {
          rmSync(p, { recursive: true, force: true });
          removed++;
        } else {
          walk(p);
        }
      } else if (DROP_FILE.test(e.name)) {
        rmSync(p, { force: true });
        removed++;
      }
    }
  };
  walk(path.join(root, 'node_modules'));
  return removed;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const root = process.argv[2];
  if (!root) {
    process.stderr.write('usage: prune-deps.mjs <dir containing node_modules>\n');
    process.exit(2);
  }
  process.stdout.write(`pruned ${pruneDeps(path.resolve(root))} entries from ${root}/node_modules\n`);
}
