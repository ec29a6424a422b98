import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { main } from '../../../src/cli/main.js';
import { cliHarness } from './cli-harness.js';

const { out, dir, refused } = cliHarness('azflex-placement-');

interface WireObject {
  kind: string;
  metadata: { name: string; namespace?: string };
  spec: { nodeName?: string; providerID?: string };
  status: Record<string, unknown>;
}

describe('azflex simulate --json placement and --output-cluster', () => {
  it('the JSON carries the placement, and the YAML List every Node, NodeClaim and Pod with its spec.nodeName; the same seed gives the same bytes', async () => {
    const yamlOf = async (name: string): Promise<{ json: { placement: { nodes: Array<{ name: string }>; pods: Array<{ name: string; node?: string; pending?: string }> } }; yaml: string }> => {
      out.stdout = [];
      const file = join(dir, name);
      expect(await main(['simulate', '--hours', '1', '--json', '--output-cluster', file]), out.stderr.join('')).toBe(0);
      return { json: JSON.parse(out.stdout.join('')), yaml: readFileSync(file, 'utf8') };
    };
    const first = await yamlOf('a.yaml');
    const list = parse(first.yaml) as { apiVersion: string; kind: string; items: WireObject[] };
    expect(list).toMatchObject({ apiVersion: 'v1', kind: 'List' });
    const kinds = (kind: string) => list.items.filter((i) => i.kind === kind);
    expect(kinds('Node').map((n) => n.metadata.name).sort()).toEqual(first.json.placement.nodes.map((n) => n.name));
    expect(kinds('NodeClaim').length).toBeGreaterThan(0);
    for (const n of kinds('Node')) expect(n.spec.providerID).toMatch(/^azure-flex:\/\/\/subscriptions\//);
    const pods = kinds('Pod');
    expect(pods.map((p) => p.metadata.name)).toEqual(first.json.placement.pods.map((p) => p.name));
    for (const [i, pod] of pods.entries()) {
      const placed = first.json.placement.pods[i]!;
      expect(pod.spec.nodeName).toBe(placed.node);
      expect(pod.status.phase).toBe(placed.node ? 'Running' : 'Pending');
      if (!placed.node) expect(placed.pending).toMatch(/offerings unavailable|limit|quota/);
    }
    const second = await yamlOf('b.yaml');
    expect(second.yaml).toBe(first.yaml);
    expect(JSON.stringify(second.json.placement)).toBe(JSON.stringify(first.json.placement));
  }, 60_000);

  it('a running cluster (examples/running-cluster/): --output-cluster shows every pod on its node, the snapshot\'s and the new ones', async () => {
    const world = join(dir, 'world.yaml');
    writeFileSync(world, 'name: h200-room\nhours: 1\nregions: [{location: eastus2, regionalQuotaCores: 1000, familyQuotaCores: {standardNDSH200v5Family: 768}}]\n');
    const file = join(dir, 'running.yaml');
    expect(await main(['simulate', '--manifests', 'examples/running-cluster/', '--world', world, '--output-cluster', file, '--assert-no-leaks']), out.stderr.join('')).toBe(0);
    const items = (parse(readFileSync(file, 'utf8')) as { items: WireObject[] }).items;
    const nodes = new Set(items.filter((i) => i.kind === 'Node').map((n) => n.metadata.name));
    const pods = items.filter((i) => i.kind === 'Pod');
    expect(pods).toHaveLength(14);
    for (const pod of pods) expect(nodes.has(pod.spec.nodeName ?? ''), `${pod.metadata.name} on ${pod.spec.nodeName}`).toBe(true);
    expect(pods.filter((p) => p.spec.nodeName?.startsWith('aks-system-'))).toHaveLength(6);
    expect(out.stdout.join('')).toMatch(/nothing leaked/);
  }, 60_000);

  it('refuses a path it cannot write, a sweep and --strategy all with one line and exit 2, before simulating', async () => {
    await refused(['--hours', '1', '--output-cluster', ''], /--output-cluster needs a file name/);
    await refused(['--hours', '1', '--output-cluster', join(dir, 'missing', 'c.yaml')], /--output-cluster .*missing does not exist/);
    await refused(['--hours', '1', '--output-cluster', dir], /--output-cluster .*: not a regular file/);
    await refused(['--hours', '1', '--seeds', '1..2', '--output-cluster', join(dir, 'c.yaml')], /--output-cluster writes one run's cluster: it does not go with --seeds/);
    await refused(['--hours', '1', '--strategy', 'all', '--output-cluster', join(dir, 'c.yaml')], /pass --strategy <name>/);
  });
});
