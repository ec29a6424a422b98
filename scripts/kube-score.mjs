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

import { cachedGoBuild } from './go-cache.mjs';

export const KUBE_SCORE_MODULE = 'github.com/zegl/kube-score';
export const KUBE_SCORE_VERSION = 'v1.20.0';

function log(msg) {
  process.stderr.write(`[kube-score] ${msg}\n`);
}

/** Builds kube-score if its cache entry is missing; returns the binary's path and how long a build took (0: cached). */
export async function ensureKubeScore() {
  return cachedGoBuild({
    entry: `kube-score@${KUBE_SCORE_VERSION}`,
    binaryName: 'kube-score',
    what: `${KUBE_SCORE_MODULE} ${KUBE_SCORE_VERSION} for the chart tests`,
    log,
    build: async (dir, go) => go(['install', '-trimpath', `${KUBE_SCORE_MODULE}/cmd/kube-score@${KUBE_SCORE_VERSION}`], { GOBIN: dir, GOFLAGS: '' }),
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const out = await ensureKubeScore();
  process.stdout.write(`${JSON.stringify(out)}\n`);
}
