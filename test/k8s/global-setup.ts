import * as path from 'node:path';
import type { TestProject } from 'vitest/node';
import { ensureEnvtest } from '../../scripts/envtest.mjs';
import { kubectl, startControlPlane, type ControlPlaneInfo } from './harness.js';

declare module 'vitest' {
  export interface ProvidedContext {
    k8s: ControlPlaneInfo;
  }
}

/**
 * One real control plane for all test/k8s files (they run one after another and keep to
 * their own object names). Binaries come from scripts/envtest.mjs: KUBEBUILDER_ASSETS,
 * PATH, the cache, or a Go build — and if none is possible this throws, failing the run
 * rather than skipping the tests.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const started = Date.now();
  const bins = await ensureEnvtest();
  const cp = await startControlPlane({ binaries: bins });
  const crds = path.resolve(import.meta.dirname, '../../crds');
  const applied = await kubectl(cp, ['apply', '--server-side', '-f', crds]);
  if (applied.code !== 0) {
    await cp.stop();
    throw new Error(`installing CRDs failed:\n${applied.stderr}`);
  }
  const established = await kubectl(cp, ['wait', '--for=condition=Established', '--timeout=60s', '-f', crds]);
  if (established.code !== 0) {
    await cp.stop();
    throw new Error(`CRDs not established:\n${established.stderr}`);
  }
  const { stop, ...info } = cp;
  project.provide('k8s', info);
  process.stderr.write(`[k8s] control plane (${bins.source}) up at ${cp.server} in ${Date.now() - started}ms\n`);
  return stop;
}
