import * as path from 'node:path';
import type { TestProject } from 'vitest/node';
import { ensureEnvtest } from '../../scripts/envtest.mjs';
import { ensureKarpenterCrds, KARPENTER_NEWEST } from '../../scripts/upstream-karpenter.mjs';
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
  // Upstream Karpenter's own karpenter.sh CRDs (newest release, from the Go module proxy),
  // as on an AKS cluster with node auto-provisioning; azflex adds only its NodeClass CRD.
  const upstream = await ensureKarpenterCrds(KARPENTER_NEWEST);
  const files = [...upstream.files, path.resolve(import.meta.dirname, '../../crds/flex.aks.azure.com_azureflexnodeclasses.yaml')];
  const crds = files.flatMap((f) => ['-f', f]);
  const applied = await kubectl(cp, ['apply', '--server-side', ...crds]);
  if (applied.code !== 0) {
    await cp.stop();
    throw new Error(`installing CRDs failed:\n${applied.stderr}`);
  }
  const established = await kubectl(cp, ['wait', '--for=condition=Established', '--timeout=60s', ...crds]);
  if (established.code !== 0) {
    await cp.stop();
    throw new Error(`CRDs not established:\n${established.stderr}`);
  }
  const { stop, restartApiServer: _restart, ...info } = cp;
  project.provide('k8s', info);
  process.stderr.write(`[k8s] control plane (${bins.source}) with karpenter.sh CRDs ${upstream.version} up at ${cp.server} in ${Date.now() - started}ms\n`);
  return stop;
}
