#!/usr/bin/env node
// Upstream Karpenter's scheduling benchmark (sigs.k8s.io/karpenter, package
// pkg/controllers/provisioning/scheduling, file scheduling_benchmark_test.go, build tag
// test_performance), compiled into a test binary that `npm run bench` runs beside azflex's own
// scheduler (bench/karpenter-parity.ts). Built through the Go module proxy into a cache and
// never committed, as upstream-karpenter.mjs builds upstream's metric dump:
//  - the module's source is copied out of the module cache (Go refuses overlays beneath it), so
//    the build's main module is upstream's own go.mod and go.sum, pinned as upstream tests it;
//  - scripts/upstream-scheduling-bench/azflex_benchmark_test.go is added to the package: its
//    benchmarks run upstream's own workloads (makeGenericPods, which upstream's
//    BenchmarkSchedulingN never run, and makeDiversePods) through upstream's own harness, and
//    report the CPU time of a Solve beside upstream's pods/sec and nodes;
//  - `go test -c -tags test_performance` (GOTOOLCHAIN=auto: the module asks for a newer Go
//    than may be installed) writes the binary; the copied source is then removed.
// Built once per release and added file; afterwards the cached binary is run as is.
//
//   node scripts/upstream-scheduling-bench.mjs     # ensure the binary, print its path

import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { fetchModuleFiles, KARPENTER_MODULE, KARPENTER_NEWEST, upstreamCacheRoot } from './upstream-karpenter.mjs';

export const SCHEDULING_PACKAGE = 'pkg/controllers/provisioning/scheduling';
const ADDED = path.join(path.dirname(new URL(import.meta.url).pathname), 'upstream-scheduling-bench', 'azflex_benchmark_test.go');

function log(msg) {
  process.stderr.write(`[upstream-scheduling-bench] ${msg}\n`);
}

/** The cached test binary (built on first use; minutes) and the build's wall time in ms (0: cached). */
export async function ensureUpstreamSchedulingBench(version = KARPENTER_NEWEST) {
  const added = await fs.readFile(ADDED, 'utf8');
  const key = createHash('sha256').update(version).update(added).digest('hex').slice(0, 16);
  const dir = path.join(upstreamCacheRoot(), `scheduling-bench@${version}-${key}`);
  const binary = path.join(dir, 'scheduling.test');
  if (existsSync(binary)) return { version, binary, buildMs: 0 };
  log(`building ${KARPENTER_MODULE}@${version} ${SCHEDULING_PACKAGE} benchmarks (first time only; minutes)`);
  const started = Date.now();
  const src = `${dir}.src-${process.pid}`;
  try {
    await fetchModuleFiles(KARPENTER_MODULE, version, (rel) => rel, src);
    await fs.writeFile(path.join(src, SCHEDULING_PACKAGE, 'azflex_benchmark_test.go'), added);
    const out = `${binary}.tmp-${process.pid}`;
    await fs.mkdir(dir, { recursive: true });
    const env = { ...process.env, GOTOOLCHAIN: 'auto', GOFLAGS: '-mod=readonly', GOWORK: 'off', GO111MODULE: 'on' };
    // nice: the build is CPU-heavy and machines running the bench are often shared.
    const r = spawnSync('nice', ['-n', '10', 'go', 'test', '-c', '-vet=off', '-tags', 'test_performance', '-o', out, `./${SCHEDULING_PACKAGE}`], {
      cwd: src, encoding: 'utf8', env, maxBuffer: 64 << 20,
    });
    if (r.error) throw new Error(`go is needed to build upstream's scheduling benchmark: ${r.error.message}`);
    if (r.status !== 0) throw new Error(`go test -c ${SCHEDULING_PACKAGE} failed (exit ${r.status}): ${r.stderr.slice(-4000)}`);
    await fs.rename(out, binary);
  } finally {
    await fs.rm(src, { recursive: true, force: true });
  }
  const buildMs = Date.now() - started;
  log(`built in ${(buildMs / 1000).toFixed(1)} s`);
  return { version, binary, buildMs };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  process.stdout.write(`${JSON.stringify(await ensureUpstreamSchedulingBench())}\n`);
}
