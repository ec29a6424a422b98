#!/usr/bin/env node
// crds/ is the source of truth. Helm installs CRDs only from charts/azflex/crds/, so that
// carries a byte-identical copy of azflex's own CRD (AzureFlexNodeClass); the karpenter.sh
// copies go to charts/azflex/karpenter-crds/, installed only when karpenterCRDs.install=true
// (a cluster with Karpenter or node auto-provisioning already has upstream's).
// `--check` exits 1 when they differ (the k8s tests call it).
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const src = path.join(root, 'crds');
const chart = path.join(root, 'charts', 'azflex');

/** Chart directory (relative) each crds/ file belongs in. */
function destinationOf(file) {
  return file.startsWith('karpenter.sh_') ? 'karpenter-crds' : 'crds';
}

export async function diffChartCrds() {
  const want = (await fs.readdir(src)).filter((f) => f.endsWith('.yaml')).sort();
  const problems = [];
  for (const f of want) {
    const rel = path.join(destinationOf(f), f);
    const a = await fs.readFile(path.join(src, f), 'utf8');
    const b = await fs.readFile(path.join(chart, rel), 'utf8').catch(() => undefined);
    if (b === undefined) problems.push(`missing charts/azflex/${rel}`);
    else if (a !== b) problems.push(`charts/azflex/${rel} differs from crds/${f}`);
  }
  for (const dir of ['crds', 'karpenter-crds']) {
    const have = (await fs.readdir(path.join(chart, dir)).catch(() => [])).filter((f) => f.endsWith('.yaml'));
    for (const f of have) if (!want.includes(f) || destinationOf(f) !== dir) problems.push(`extra charts/azflex/${dir}/${f}`);
  }
  return problems;
}

async function sync() {
  for (const dir of ['crds', 'karpenter-crds']) {
    await fs.mkdir(path.join(chart, dir), { recursive: true });
    for (const f of (await fs.readdir(path.join(chart, dir))).filter((x) => x.endsWith('.yaml'))) await fs.rm(path.join(chart, dir, f));
  }
  for (const f of (await fs.readdir(src)).filter((x) => x.endsWith('.yaml'))) await fs.copyFile(path.join(src, f), path.join(chart, destinationOf(f), f));
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  if (process.argv.includes('--check')) {
    const problems = await diffChartCrds();
    for (const p of problems) process.stderr.write(`${p}\n`);
    process.exit(problems.length ? 1 : 0);
  } else {
    await sync();
    process.stdout.write('charts/azflex/crds and karpenter-crds synced from crds/\n');
  }
}
