#!/usr/bin/env node
// `npm test` runs this first (pretest), so the README's two commands work on a fresh machine:
//  - Debian's chromium for the browser tests (playwright-core never downloads a browser);
//  - etcd, kube-apiserver, kube-scheduler, kube-controller-manager, KWOK, helm and kubectl for the Kubernetes tests
//    (built once from the Go module proxy into ~/.cache/azflex/envtest, see envtest.mjs);
//  - upstream Karpenter's metric families (built once from its Go module, see upstream-karpenter.mjs);
//  - the Go Azure SDK client of the ARM face (built once, see go-arm-client.mjs);
//  - kube-score, which the chart tests run on the rendered chart (built once, see kube-score.mjs).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { ensureEnvtest } from './envtest.mjs';
import { ensureGoArmClient } from './go-arm-client.mjs';
import { ensureKubeScore } from './kube-score.mjs';
import { ensureUpstreamMetrics } from './upstream-karpenter.mjs';

const CHROMIUM = '/usr/bin/chromium';

function ensureChromium() {
  if (existsSync(CHROMIUM)) return;
  const root = typeof process.getuid === 'function' && process.getuid() === 0;
  const apt = spawnSync('sh', ['-c', 'command -v apt-get'], { encoding: 'utf8' }).status === 0;
  if (!root || !apt) {
    throw new Error(`${CHROMIUM} is missing: install Debian's chromium (apt-get install chromium) to run the browser tests`);
  }
  process.stderr.write('[prereqs] installing chromium from Debian (once)\n');
  for (const args of [['update', '-qq'], ['install', '-y', '-qq', 'chromium']]) {
    const r = spawnSync('apt-get', args, { stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
    if (r.status !== 0) throw new Error(`apt-get ${args.join(' ')} failed (exit ${r.status})`);
  }
}

try {
  ensureChromium();
  const env = await ensureEnvtest();
  const metrics = await ensureUpstreamMetrics();
  const goClient = await ensureGoArmClient();
  const kubeScore = await ensureKubeScore();
  process.stderr.write(`[prereqs] chromium ok; envtest binaries in ${env.assetsDir}; upstream metrics in ${metrics.file}; Go SDK client ${goClient.binary}; kube-score ${kubeScore.binary}\n`);
} catch (err) {
  process.stderr.write(`[prereqs] ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
}
