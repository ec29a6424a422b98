// A Go tool built once into the cache beside the upstream artifacts (~/.cache/azflex/<entry>):
// built in a temporary directory next to its entry and renamed into place, so an interrupted
// build never leaves a half-built entry behind. Used by go-arm-client.mjs and kube-score.mjs.

import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { upstreamCacheRoot } from './upstream-karpenter.mjs';

/**
 * Returns `<entry>/<binaryName>`, running `build(dir, go)` first when it is missing. `go(args, env)`
 * runs the Go command in `dir` through the module proxy (GOTOOLCHAIN=auto, no workspace) and
 * throws with its stderr when it fails.
 */
export async function cachedGoBuild({ entry, binaryName, what, log, build }) {
  const work = path.join(path.dirname(upstreamCacheRoot()), entry);
  const binary = path.join(work, binaryName);
  if (existsSync(binary)) return { binary, buildMs: 0 };
  log(`building ${what} (first time only)`);
  const started = Date.now();
  const tmp = `${work}.tmp-${process.pid}`;
  await fs.rm(tmp, { recursive: true, force: true });
  await fs.mkdir(tmp, { recursive: true });
  const go = (args, env = {}) => {
    const r = spawnSync('go', args, { cwd: tmp, encoding: 'utf8', env: { ...process.env, GOTOOLCHAIN: 'auto', GOWORK: 'off', GO111MODULE: 'on', ...env }, maxBuffer: 64 << 20 });
    if (r.error) throw new Error(`go is needed to build ${what}: ${r.error.message}`);
    if (r.status !== 0) throw new Error(`go ${args.join(' ')} failed (exit ${r.status}): ${r.stderr.slice(-4000)}`);
  };
  try {
    await build(tmp, go);
  } catch (err) {
    await fs.rm(tmp, { recursive: true, force: true });
    throw err;
  }
  await fs.rm(work, { recursive: true, force: true });
  await fs.rename(tmp, work);
  const buildMs = Date.now() - started;
  log(`built in ${(buildMs / 1000).toFixed(1)} s`);
  return { binary, buildMs };
}
