#!/usr/bin/env node
// Upstream Karpenter's own artifacts, fetched through the Go module proxy into a cache and
// never committed: the karpenter.sh CRDs (sigs.k8s.io/karpenter, pkg/apis/crds/) that the
// integration tests and `azflex dev` install, and the example NodePools of the AWS provider
// (github.com/aws/karpenter-provider-aws, examples/v1/) that every Karpenter user starts from,
// and that provider's chart values (charts/karpenter/values.yaml), the names users' Helm values use.
//
//   node scripts/upstream-karpenter.mjs     # ensure both CRD versions + examples, print paths as JSON
//   node scripts/upstream-karpenter.mjs --metrics   # also upstream's metric families (builds Go code)
//
// Upstream's metrics (names, types, label names, buckets) are read from its own code: the
// small program in scripts/upstream-metrics/ imports sigs.k8s.io/karpenter's metric packages
// and prints what they register. It is built once per release with `go build` (the module
// asks for a newer Go than may be installed: GOTOOLCHAIN=auto fetches that toolchain through
// the Go module proxy), and its JSON cached. The first build takes minutes (4.5 min measured on
// 2 cores with the modules already downloaded; `npm test`'s pretest does it); afterwards the
// cached JSON is read.
//
// `go mod download -json` gives the module's extracted Dir, or only its Zip when the module
// asks for a newer Go than the local one (GOTOOLCHAIN=local never downloads a toolchain);
// the zip is then read with the envtest script's zip reader.

import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import * as fs from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import * as path from 'node:path';
import { extractZipEntries } from './envtest.mjs';

/** The newest karpenter.sh/v1 release (`go list -m -versions sigs.k8s.io/karpenter`). */
export const KARPENTER_NEWEST = 'v1.15.0';
/** The oldest supported: the last patch of v1.0, the first release of the karpenter.sh/v1 API. */
export const KARPENTER_OLDEST = 'v1.0.8';
export const KARPENTER_MODULE = 'sigs.k8s.io/karpenter';
export const AWS_PROVIDER_MODULE = 'github.com/aws/karpenter-provider-aws';
export const AWS_PROVIDER_VERSION = 'v1.15.1';

const CRD_FILES = ['karpenter.sh_nodepools.yaml', 'karpenter.sh_nodeclaims.yaml'];

export function upstreamCacheRoot() {
  if (process.env.AZFLEX_UPSTREAM_CACHE) return process.env.AZFLEX_UPSTREAM_CACHE;
  const base = process.env.XDG_CACHE_HOME || path.join(homedir(), '.cache');
  return path.join(base, 'azflex', 'upstream');
}

function log(msg) {
  process.stderr.write(`[upstream] ${msg}\n`);
}

/** `go mod download -json module@version`: the parsed answer (Dir and/or Zip). */
function goModDownload(module, version) {
  const work = path.join(tmpdir(), 'azflex-gomod');
  const r = spawnSync('go', ['mod', 'download', '-json', `${module}@${version}`], {
    cwd: existsSync(work) ? work : tmpdir(),
    encoding: 'utf8',
    env: { ...process.env, GOTOOLCHAIN: 'local', GOFLAGS: '-mod=mod', GOWORK: 'off', GO111MODULE: 'on' },
  });
  if (r.error) throw new Error(`go is needed to fetch ${module}@${version} through the Go module proxy: ${r.error.message}`);
  const text = r.stdout ?? '';
  const start = text.indexOf('{');
  if (start < 0) throw new Error(`go mod download ${module}@${version} failed (exit ${r.status}): ${r.stderr}`);
  return JSON.parse(text.slice(start));
}

/** Copies the files of module@version that `pick` names (given paths relative to the module root; returns the path under dest, or undefined to skip) into dest. */
export async function fetchModuleFiles(module, version, pick, dest) {
  const info = goModDownload(module, version);
  const prefix = `${module}@${version}/`;
  const tmp = `${dest}.tmp-${process.pid}`;
  await fs.rm(tmp, { recursive: true, force: true });
  await fs.mkdir(tmp, { recursive: true });
  let count = 0;
  if (info.Dir && existsSync(info.Dir)) {
    const walk = async (rel) => {
      for (const entry of await fs.readdir(path.join(info.Dir, rel), { withFileTypes: true })) {
        const r = rel ? `${rel}/${entry.name}` : entry.name;
        if (entry.isDirectory()) await walk(r);
        else {
          const target = pick(r);
          if (!target) continue;
          await fs.mkdir(path.dirname(path.join(tmp, target)), { recursive: true });
          await fs.copyFile(path.join(info.Dir, r), path.join(tmp, target));
          count++;
        }
      }
    };
    await walk('');
  } else if (info.Zip && existsSync(info.Zip)) {
    const found = await extractZipEntries(info.Zip, (name) => (name.startsWith(prefix) ? pick(name.slice(prefix.length)) : undefined), tmp);
    count = Object.keys(found).length;
  } else {
    throw new Error(`go mod download ${module}@${version} gave neither Dir nor Zip: ${info.Error ?? JSON.stringify(info)}`);
  }
  if (count === 0) throw new Error(`${module}@${version}: none of the wanted files found`);
  await fs.rm(dest, { recursive: true, force: true });
  await fs.rename(tmp, dest);
}

/** Upstream's karpenter.sh CRDs (NodePool, NodeClaim) of one release, as file paths. */
export async function ensureKarpenterCrds(version = KARPENTER_NEWEST) {
  const dir = path.join(upstreamCacheRoot(), `karpenter@${version}`, 'crds');
  const files = CRD_FILES.map((f) => path.join(dir, f));
  if (files.every((f) => existsSync(f))) return { version, dir, files };
  log(`fetching ${KARPENTER_MODULE}@${version} CRDs through the Go module proxy`);
  await fetchModuleFiles(KARPENTER_MODULE, version, (rel) => (rel.startsWith('pkg/apis/crds/') && CRD_FILES.includes(path.basename(rel)) ? path.basename(rel) : undefined), dir);
  return { version, dir, files };
}

/** The AWS provider's examples/v1 (NodePools with their EC2NodeClasses), one file each. */
export async function ensureUpstreamExamples(version = AWS_PROVIDER_VERSION) {
  const dir = path.join(upstreamCacheRoot(), `karpenter-provider-aws@${version}`, 'examples');
  if (existsSync(dir)) {
    const files = (await fs.readdir(dir)).filter((f) => f.endsWith('.yaml')).sort();
    if (files.length > 0) return { version, dir, files: files.map((f) => path.join(dir, f)) };
  }
  log(`fetching ${AWS_PROVIDER_MODULE}@${version} examples through the Go module proxy`);
  await fetchModuleFiles(AWS_PROVIDER_MODULE, version, (rel) => (/^examples\/v1\/[^/]+\.yaml$/.test(rel) ? path.basename(rel) : undefined), dir);
  const files = (await fs.readdir(dir)).filter((f) => f.endsWith('.yaml')).sort();
  return { version, dir, files: files.map((f) => path.join(dir, f)) };
}

/** The AWS provider's Helm chart values (charts/karpenter/values.yaml): the value names Karpenter users' files use. */
export async function ensureUpstreamChartValues(version = AWS_PROVIDER_VERSION) {
  const dir = path.join(upstreamCacheRoot(), `karpenter-provider-aws@${version}`, 'chart');
  const file = path.join(dir, 'values.yaml');
  if (existsSync(file)) return { version, file };
  log(`fetching ${AWS_PROVIDER_MODULE}@${version} chart values through the Go module proxy`);
  await fetchModuleFiles(AWS_PROVIDER_MODULE, version, (rel) => (rel === 'charts/karpenter/values.yaml' ? 'values.yaml' : undefined), dir);
  return { version, file };
}

/**
 * Upstream's metric families of one release, as its own code registers them:
 * [{ name, help, type: counter|gauge|histogram|summary, labels (sorted), buckets? }].
 */
export async function ensureUpstreamMetrics(version = KARPENTER_NEWEST) {
  const file = path.join(upstreamCacheRoot(), `karpenter@${version}`, 'metrics.json');
  if (existsSync(file)) return { version, file, families: JSON.parse(await fs.readFile(file, 'utf8')) };
  log(`building upstream's metric dump against ${KARPENTER_MODULE}@${version} (first time only)`);
  const src = path.join(path.dirname(new URL(import.meta.url).pathname), 'upstream-metrics');
  const work = path.join(upstreamCacheRoot(), `metrics-dump@${version}`);
  await fs.rm(work, { recursive: true, force: true });
  await fs.mkdir(path.join(work, 'hook'), { recursive: true });
  await fs.copyFile(path.join(src, 'main.go'), path.join(work, 'main.go'));
  await fs.copyFile(path.join(src, 'hook', 'hook.go'), path.join(work, 'hook', 'hook.go'));
  // The module path sorts before every dependency, which the hook's init order relies on.
  await fs.writeFile(path.join(work, 'go.mod'), `module azflexdump\n\ngo 1.24\n\nrequire ${KARPENTER_MODULE} ${version}\n`);
  const env = { ...process.env, GOTOOLCHAIN: 'auto', GOFLAGS: '-mod=mod', GOWORK: 'off', GO111MODULE: 'on' };
  const run = (args) => {
    const r = spawnSync('go', args, { cwd: work, encoding: 'utf8', env, maxBuffer: 64 << 20 });
    if (r.error) throw new Error(`go is needed to read upstream's metrics: ${r.error.message}`);
    if (r.status !== 0) throw new Error(`go ${args.join(' ')} failed (exit ${r.status}): ${r.stderr.slice(-4000)}`);
    return r.stdout;
  };
  run(['mod', 'tidy']);
  run(['build', '-o', 'dump', '.']);
  const dumped = spawnSync(path.join(work, 'dump'), { encoding: 'utf8', maxBuffer: 64 << 20 });
  if (dumped.status !== 0) throw new Error(`upstream's metric dump failed (exit ${dumped.status}): ${dumped.stderr}`);
  const families = JSON.parse(dumped.stdout);
  if (!Array.isArray(families) || families.length === 0) throw new Error(`upstream's metric dump for ${version} printed no metrics`);
  await fs.mkdir(path.dirname(file), { recursive: true });
  await fs.writeFile(`${file}.tmp`, JSON.stringify(families, null, 1));
  await fs.rename(`${file}.tmp`, file);
  return { version, file, families };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const out = {
    newest: await ensureKarpenterCrds(KARPENTER_NEWEST),
    oldest: await ensureKarpenterCrds(KARPENTER_OLDEST),
    examples: await ensureUpstreamExamples(),
    chartValues: await ensureUpstreamChartValues(),
    ...(process.argv.includes('--metrics') ? { metrics: (await ensureUpstreamMetrics()).file } : {}),
  };
  process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
}
