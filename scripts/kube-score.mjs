#!/usr/bin/env node
// kube-score, the static checker the chart tests run on the rendered chart (test/k8s/chart-lint.test.ts),
// built through the Go module proxy into a cache and never committed, like the other Go tools
// (scripts/go-arm-client.mjs): `go install module@version` with the module proxy and the Go
// checksum database, GOTOOLCHAIN=auto in case the module asks for a newer Go. kube-linter,
// which the security review used, cannot be built this way: the proxy refuses its module.
//
//   node scripts/kube-score.mjs     # ensure the binary, print its path
//
// Built once per version; afterwards the cached binary is used as is (`npm test`'s pretest).

import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { upstreamCacheRoot } from './upstream-karpenter.mjs';

export const KUBE_SCORE_MODULE = 'github.com/zegl/kube-score';
export const KUBE_SCORE_VERSION = 'v1.20.0';

function log(msg) {
  process.stderr.write(`[kube-score] ${msg}\n`);
}

/** Builds kube-score if its cache entry is missing; returns the binary's path and how long a build took (0: cached). */
export async function ensureKubeScore() {
  // Beside the upstream artifacts (~/.cache/azflex/upstream): ~/.cache/azflex/kube-score@<version>.
  const work = path.join(path.dirname(upstreamCacheRoot()), `kube-score@${KUBE_SCORE_VERSION}`);
  const binary = path.join(work, 'kube-score');
  if (existsSync(binary)) return { binary, buildMs: 0 };
  log(`building ${KUBE_SCORE_MODULE} ${KUBE_SCORE_VERSION} (first time only)`);
  const started = Date.now();
  const tmp = `${work}.tmp-${process.pid}`;
  await fs.rm(tmp, { recursive: true, force: true });
  await fs.mkdir(tmp, { recursive: true });
  const env = { ...process.env, GOBIN: tmp, GOTOOLCHAIN: 'auto', GOWORK: 'off', GO111MODULE: 'on', GOFLAGS: '' };
  const r = spawnSync('go', ['install', '-trimpath', `${KUBE_SCORE_MODULE}/cmd/kube-score@${KUBE_SCORE_VERSION}`], { cwd: tmp, encoding: 'utf8', env, maxBuffer: 64 << 20 });
  if (r.error || r.status !== 0) {
    await fs.rm(tmp, { recursive: true, force: true });
    if (r.error) throw new Error(`go is needed to build kube-score for the chart tests: ${r.error.message}`);
    throw new Error(`go install ${KUBE_SCORE_MODULE}/cmd/kube-score@${KUBE_SCORE_VERSION} failed (exit ${r.status}): ${r.stderr.slice(-4000)}`);
  }
  await fs.rm(work, { recursive: true, force: true });
  await fs.rename(tmp, work);
  const buildMs = Date.now() - started;
  log(`built in ${(buildMs / 1000).toFixed(1)} s`);
  return { binary, buildMs };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const out = await ensureKubeScore();
  process.stdout.write(`${JSON.stringify(out)}\n`);
}
