import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { validateNodeClassSpec } from '../../src/apis/nodeclass-validation.js';
import { toNodeClass } from '../../src/k8s/resources.js';
import { kubectl } from './harness.js';

const info = inject('k8s');
const dir = path.resolve(import.meta.dirname, '../../examples');
const files = fs.readdirSync(dir).filter((f) => f.endsWith('.yaml')).sort();
/** examples/topology/: anti-affinity, zone spread and a zonal disk (kubectl apply -f examples/topology/). */
const topology = fs.readdirSync(path.join(dir, 'topology')).filter((f) => f.endsWith('.yaml')).sort().map((f) => path.join('topology', f));
/** examples/static/: a static NodePool (spec.replicas) with its NodeClass. */
const statics = fs.readdirSync(path.join(dir, 'static')).filter((f) => f.endsWith('.yaml')).sort().map((f) => path.join('static', f));
/** examples/sweep/: a seed sweep as an Indexed Job. */
const sweep = fs.readdirSync(path.join(dir, 'sweep')).filter((f) => f.endsWith('.yaml')).sort().map((f) => path.join('sweep', f));

describe('examples/', () => {
  it('has the H200 (eastus2, eastus2euap), deployment and CPU examples', () => {
    const kinds = files.flatMap((f) => parseAllDocuments(fs.readFileSync(path.join(dir, f), 'utf8')).map((d) => `${(d.toJSON() as { kind: string }).kind}/${(d.toJSON() as { metadata: { name: string } }).metadata.name}`));
    expect(kinds).toEqual(
      expect.arrayContaining([
        'AzureFlexNodeClass/h200-eastus2',
        'AzureFlexNodeClass/h200-eastus2euap',
        'NodePool/h200-eastus2',
        'NodePool/h200-eastus2euap',
        'Deployment/h200-trainer',
        'AzureFlexNodeClass/cpu-eastus2',
        'NodePool/cpu-d8s',
      ]),
    );
    const deployment = parseAllDocuments(fs.readFileSync(path.join(dir, 'h200-deployment.yaml'), 'utf8'))[0]?.toJSON() as {
      spec: { template: { spec: { nodeSelector: Record<string, string>; tolerations: unknown[]; containers: Array<{ resources: { limits: Record<string, unknown> } }> } } };
    };
    expect(deployment.spec.template.spec.nodeSelector).toEqual({ gpu: 'h200' });
    expect(deployment.spec.template.spec.containers[0]?.resources.limits['nvidia.com/gpu']).toBe(8);
    expect(deployment.spec.template.spec.tolerations).toHaveLength(1);
    // The CPU pool is opt-in: an ordinary pod (no toleration) can never be placed there.
    const cpu = parseAllDocuments(fs.readFileSync(path.join(dir, 'nodepool-cpu-d8s.yaml'), 'utf8'))[0]?.toJSON() as { spec: { template: { spec: { taints?: Array<{ effect: string }> } } } };
    expect(cpu.spec.template.spec.taints?.some((t) => t.effect === 'NoSchedule')).toBe(true);
  });

  it('every example NodeClass also passes the controller validation (so it would become Ready)', async () => {
    const classes = files.filter((f) => f.startsWith('azureflexnodeclass-'));
    expect(classes.length).toBeGreaterThanOrEqual(3);
    for (const f of classes) {
      // Defaults come from the API server, exactly as the controller would see the object.
      const r = await kubectl(info, ['apply', '--dry-run=server', '-o', 'json', '-f', path.join(dir, f)]);
      expect(r.code, r.stderr).toBe(0);
      const result = validateNodeClassSpec(toNodeClass(JSON.parse(r.stdout) as Record<string, unknown>).spec);
      expect(result, f).toMatchObject({ ok: true });
    }
  });

  it('has the topology examples: one node per replica, a zone spread, a zonal disk with a NodePool that reaches it, a disk that binds Immediately', () => {
    const kinds = topology.flatMap((f) => parseAllDocuments(fs.readFileSync(path.join(dir, f), 'utf8')).map((d) => `${(d.toJSON() as { kind: string }).kind}/${(d.toJSON() as { metadata: { name: string } }).metadata.name}`));
    expect(kinds.sort()).toEqual([
      'AzureFlexNodeClass/cpu-westeurope', 'Deployment/immediate-disk', 'Deployment/one-per-node', 'Deployment/zonal-db', 'Deployment/zone-spread', 'NodePool/cpu-westeurope',
      'PersistentVolume/zonal-db-disk', 'PersistentVolumeClaim/immediate-data', 'PersistentVolumeClaim/zonal-db-data', 'StorageClass/managed-csi-immediate', 'StorageClass/managed-csi-zonal',
    ]);
  });

  it('has the static keepalive: two H200 nodes held by spec.replicas, no weight, only a nodes limit, and a NodeClass the controller accepts', async () => {
    const docs = parseAllDocuments(fs.readFileSync(path.join(dir, 'static', 'h200-keepalive.yaml'), 'utf8')).map((d) => d.toJSON() as { kind: string; spec: Record<string, unknown> });
    const pool = docs.find((d) => d.kind === 'NodePool')!;
    expect(pool.spec).toMatchObject({ replicas: 2, limits: { nodes: '3' } });
    expect(pool.spec).not.toHaveProperty('weight');
    const r = await kubectl(info, ['apply', '--dry-run=server', '-o', 'json', '-f', path.join(dir, 'static', 'h200-keepalive.yaml')]);
    expect(r.code, r.stderr).toBe(0);
    const applied = (JSON.parse(r.stdout) as { items: Array<Record<string, unknown> & { kind: string }> }).items;
    expect(validateNodeClassSpec(toNodeClass(applied.find((o) => o.kind === 'AzureFlexNodeClass')!).spec)).toMatchObject({ ok: true });
  });

  it('the sweep Job runs one shard per completion index, as many shards as completions', () => {
    expect(sweep).toEqual(['sweep/job.yaml']);
    const job = parseAllDocuments(fs.readFileSync(path.join(dir, 'sweep/job.yaml'), 'utf8'))[0]?.toJSON() as {
      spec: { completionMode: string; completions: number; template: { spec: { containers: Array<{ command?: unknown; args: string[] }> } } };
    };
    expect(job.spec.completionMode).toBe('Indexed');
    const [container] = job.spec.template.spec.containers;
    // The image's entrypoint is the CLI: args only.
    expect(container!.command).toBeUndefined();
    expect(container!.args.slice(0, 1)).toEqual(['simulate']);
    expect(container!.args[container!.args.indexOf('--shard') + 1]).toBe(`$(JOB_COMPLETION_INDEX)/${job.spec.completions}`);
  });

  it.each([...files, ...topology, ...statics, ...sweep])('%s passes kubectl apply --dry-run=server', async (file) => {
    const r = await kubectl(info, ['apply', '--dry-run=server', '-f', path.join(dir, file)]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/\(server dry run\)/);
  });
});
