#!/usr/bin/env node
// crds/ is the source of truth; Helm installs CRDs only from charts/azflex/crds/, so it
// carries byte-identical copies. `--check` exits 1 when they differ (the k8s tests call it).
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const src = path.join(root, 'crds');
const dst = path.join(root, 'charts', 'azflex', 'crds');

export async function diffChartCrds() {
  const want = (await fs.readdir(src)).filter((f) => f.endsWith('.yaml')).sort();
  const have = (await fs.readdir(dst).catch(() => [])).filter((f) => f.endsWith('.yaml')).sort();
  const problems = [];
  for (const f of want) {
    const a = await fs.readFile(path.join(src, f), 'utf8');
    const b = await fs.readFile(path.join(dst, f), 'utf8').catch(() => undefined);
    if (b === undefined) problems.push(`missing charts/azflex/crds/${f}`);
    else if (a !== b) problems.push(`charts/azflex/crds/${f} differs from crds/${f}`);
  }
  for (const f of have) if (!want.includes(f)) problems.push(`extra charts/azflex/crds/${f}`);
  return problems;
}

async function sync() {
  await fs.mkdir(dst, { recursive: true });
  for (const f of (await fs.readdir(dst)).filter((x) => x.endsWith('.yaml'))) await fs.rm(path.join(dst, f));
  for (const f of (await fs.readdir(src)).filter((x) => x.endsWith('.yaml'))) await fs.copyFile(path.join(src, f), path.join(dst, f));
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  if (process.argv.includes('--check')) {
    const problems = await diffChartCrds();
    for (const p of problems) process.stderr.write(`${p}\n`);
    process.exit(problems.length ? 1 : 0);
  } else {
    await sync();
    process.stdout.write('charts/azflex/crds synced from crds/\n');
  }
}
