import * as path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { run, type ControlPlaneInfo } from './harness.js';

export const chartDir = path.resolve(import.meta.dirname, '../../charts/azflex');
export const ciValues = path.join(chartDir, 'ci', 'test-values.yaml');

export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [k: string]: unknown;
}

/** `helm template` with the CI values; returns the YAML stream. */
export async function renderChartYaml(info: ControlPlaneInfo, release: string, namespace: string, extra: string[] = []): Promise<string> {
  const r = await run(info.binaries.helm, ['template', release, chartDir, '-n', namespace, '-f', ciValues, ...extra]);
  if (r.code !== 0) throw new Error(`helm template failed: ${r.stderr}`);
  return r.stdout;
}

/** `helm template` with the CI values; returns the parsed objects. */
export async function renderChart(info: ControlPlaneInfo, release: string, namespace: string, extra: string[] = []): Promise<K8sObject[]> {
  return parseAllDocuments(await renderChartYaml(info, release, namespace, extra))
    .map((d) => d.toJSON() as K8sObject | null)
    .filter((o): o is K8sObject => o !== null);
}
