#!/usr/bin/env node
// Writes the app the image runs from /app: esbuild's bundle of the controller in dist/cli
// (main.js, the CLI, and worker-loop.js, the sweep's worker thread, which sweep.ts starts from
// next to main.js; each with a linked source map; the files src reads next to itself),
// package.json, and crds (read two levels above dist/cli, as from src/<dir>/). One bundle,
// minified, instead of a tsc tree and node_modules: the process then holds only the code it can
// reach, which at scale is most of its memory otherwise (client-node's generated API, the Azure
// SDKs' model metadata). Also writes <appDir>/dist/THIRD-PARTY-NOTICES: every npm package in
// the bundle with its version and license text.
// Same inputs, same bytes: the image digest depends on it.
//   node scripts/bundle-app.mjs <appDir>   (bench/controller-scale and the Dockerfile call it too)
import { build } from 'esbuild';
import { copyFileSync, cpSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const ENTRY_POINTS = ['src/cli/main.ts', 'src/sim/sweep/worker-loop.ts'];
/** Read at runtime relative to the module that reads them (`new URL(..., import.meta.url)`). */
const ASSETS = ['src/live/client.js'];
/**
 * The output directory esbuild is told about. Source map paths are relative to it, so a fixed
 * one (not the caller's, often a temporary directory) keeps the maps the same wherever they land.
 */
const VIRTUAL_OUTDIR = path.join(REPO, 'dist', 'cli');

// CommonJS dependencies call require(); an ES module has none of its own.
const BANNER = "import { createRequire as __azflexCreateRequire } from 'node:module';\nconst require = __azflexCreateRequire(import.meta.url);";

/**
 * `azflex dev` imports the repo's scripts/*.mjs (the envtest cache, upstream Karpenter CRDs),
 * which find their files relative to themselves: left as imports, not bundled. dist/cli sits
 * as deep as src/dev, so the path still reaches the repo's scripts from a checkout's bundle.
 */
const repoScriptsStayExternal = {
  name: 'repo-scripts-external',
  setup(b) {
    b.onResolve({ filter: /^(\.\.\/)+scripts\/[^/]+\.mjs$/ }, (args) => ({ path: args.path, external: true }));
  },
};

/** Writes `<appDir>/dist`, `package.json` and `crds`; prints nothing, throws esbuild's message on failure. */
export async function bundleApp(appDir) {
  // It replaces dist and crds under appDir: never the checkout's own.
  if (path.resolve(appDir) === REPO) throw new Error('bundle-app: appDir must not be the repository itself');
  const result = await build({
    absWorkingDir: REPO,
    entryPoints: ENTRY_POINTS,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node24',
    // Whitespace and syntax only: renamed identifiers would need keepNames for the error class
    // names pino logs (ClusterError, ...), and keepNames gives every closure a property store
    // (~4 KB more per XState actor, measured in a heap snapshot).
    minifyWhitespace: true,
    minifySyntax: true,
    // What a command imports lazily is its own chunk: `azflex controller` never parses the
    // simulator, the live view's renderer or the report. Chunks sit beside main.js, so a file
    // read relative to a module (client.js) is found from any of them.
    splitting: true,
    entryNames: '[name]',
    chunkNames: '[name]-[hash]',
    outdir: VIRTUAL_OUTDIR,
    banner: { js: BANNER },
    // Linked (a sourceMappingURL comment) so --enable-source-maps finds it. No sources content:
    // stack traces need only the mappings, and Node keeps a loaded map in memory (with the
    // sources, ~48 MiB of heap instead of ~25 after loading the bundle).
    sourcemap: 'linked',
    sourcesContent: false,
    // THIRD-PARTY-NOTICES carries the licenses in full.
    legalComments: 'none',
    plugins: [repoScriptsStayExternal],
    metafile: true,
    write: false,
    logLevel: 'silent',
  }).catch((err) => {
    throw new Error(`esbuild failed:\n${err.errors?.map((e) => formatMessage(e)).join('\n') ?? err.message}`);
  });
  const outdir = path.join(appDir, 'dist', 'cli');
  rmSync(path.join(appDir, 'dist'), { recursive: true, force: true });
  mkdirSync(outdir, { recursive: true });
  for (const f of result.outputFiles) {
    // V8 holds a script with any non-ASCII character at two bytes a character: the whole bundle.
    if (f.path.endsWith('.js') && f.contents.some((b) => b > 0x7f)) throw new Error(`bundle-app: ${path.basename(f.path)} is not ASCII: escape the character in src (as \\u00b5 in src/utils/duration.ts)`);
    writeFileSync(path.join(outdir, path.relative(VIRTUAL_OUTDIR, f.path)), f.contents);
  }
  for (const a of ASSETS) copyFileSync(path.join(REPO, a), path.join(outdir, path.basename(a)));
  writeFileSync(path.join(appDir, 'dist', 'THIRD-PARTY-NOTICES'), thirdPartyNotices(result.metafile));
  copyFileSync(path.join(REPO, 'package.json'), path.join(appDir, 'package.json'));
  rmSync(path.join(appDir, 'crds'), { recursive: true, force: true });
  cpSync(path.join(REPO, 'crds'), path.join(appDir, 'crds'), { recursive: true });
}

function formatMessage(e) {
  const where = e.location ? `${e.location.file}:${e.location.line}:${e.location.column}: ` : '';
  return `${where}${e.text}`;
}

/** The package directory of a bundled file under node_modules (nested installs included), or undefined. */
function packageDirOf(input) {
  const parts = input.split('/');
  const i = parts.lastIndexOf('node_modules');
  if (i < 0) return undefined;
  const length = parts[i + 1]?.startsWith('@') ? 3 : 2;
  return parts.slice(0, i + length).join('/');
}

const LICENSE_FILE = /^(licen[cs]e|copying|notice)(\.(md|txt|markdown))?$/i;

/** One section per npm package that contributes bytes to an output, sorted by name and version. */
function thirdPartyNotices(metafile) {
  const dirs = new Set();
  for (const out of Object.values(metafile.outputs)) {
    for (const [input, { bytesInOutput }] of Object.entries(out.inputs)) {
      const dir = bytesInOutput > 0 ? packageDirOf(input) : undefined;
      if (dir) dirs.add(dir);
    }
  }
  const sections = [...dirs].map((dir) => {
    const abs = path.join(REPO, dir);
    const pkg = JSON.parse(readFileSync(path.join(abs, 'package.json'), 'utf8'));
    const files = readdirSync(abs).filter((f) => LICENSE_FILE.test(f)).sort();
    const texts = files.map((f) => readFileSync(path.join(abs, f), 'utf8').trim());
    const license = typeof pkg.license === 'string' ? pkg.license : (pkg.license?.type ?? 'UNKNOWN');
    const body = texts.length > 0 ? texts.join('\n\n') : `${license} (the package ships no license file)`;
    return { key: `${pkg.name}@${pkg.version}`, text: `${pkg.name} ${pkg.version} (${license})\n\n${body}\n` };
  });
  // A package installed twice at one version (nested) appears once.
  const unique = new Map(sections.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)).map((s) => [s.key, s.text]));
  const rule = `\n${'-'.repeat(78)}\n\n`;
  return `azflex bundles the following npm packages into dist/cli.\n${rule}${[...unique.values()].join(rule)}`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const appDir = process.argv[2];
  if (!appDir || process.argv.length > 3) {
    process.stderr.write('usage: bundle-app.mjs <appDir>\n');
    process.exit(2);
  }
  try {
    await bundleApp(path.resolve(appDir));
  } catch (err) {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  }
}
