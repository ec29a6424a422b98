import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import type { FakeArmConfig } from '../sim/arm/types.js';

/**
 * examples/ name a placeholder subscription and subnets the fake ARM does not know. `azflex
 * dev` writes a copy whose NodeClasses point at the fake ARM's subscription and subnet of
 * the same region, and leaves out NodeClasses (and their NodePools) for regions the fake ARM
 * does not serve, so `kubectl apply -f <copy>` works as is.
 */

interface Doc {
  kind?: string;
  metadata?: { name?: string };
  spec?: Record<string, unknown> & { template?: { spec?: { nodeClassRef?: { name?: string } } } };
}

function resourceGroupOf(armId: string): string | undefined {
  return /\/resourceGroups\/([^/]+)/i.exec(armId)?.[1];
}

/** Rewrites one NodeClass for the fake ARM; undefined when the ARM has no such region. */
function retarget(doc: Doc, config: FakeArmConfig): Doc | undefined {
  const location = doc.spec?.['location'];
  const region = config.regions.find((r) => r.location === location);
  if (!region) return undefined;
  const subnet = config.subnets.find((s) => s.id.toLowerCase().startsWith(`/subscriptions/${region.subscriptionId.toLowerCase()}/`));
  if (!subnet) return undefined;
  return {
    ...doc,
    spec: { ...doc.spec, subscriptionID: region.subscriptionId, subnetID: subnet.id, resourceGroup: resourceGroupOf(subnet.id) ?? doc.spec?.['resourceGroup'] },
  };
}

export async function writeDevExamples(srcDir: string, outDir: string, config: FakeArmConfig): Promise<string[]> {
  const entries = await fs.readdir(srcDir, { withFileTypes: true });
  const files = entries.filter((e) => e.isFile() && /\.ya?ml$/.test(e.name)).map((e) => e.name).sort();
  // Subdirectories (examples/topology/) are examples of their own, `kubectl apply -f dir` each.
  const subdirs = entries.filter((e) => e.isDirectory()).map((e) => e.name).sort();
  const parsed = await Promise.all(files.map(async (f) => ({ file: f, docs: parseAllDocuments(await fs.readFile(path.join(srcDir, f), 'utf8')).map((d) => d.toJS() as Doc | null) })));
  const served = new Set<string>();
  for (const { docs } of parsed) for (const d of docs) if (d?.kind === 'AzureFlexNodeClass' && d.metadata?.name && retarget(d, config)) served.add(d.metadata.name);
  await fs.rm(outDir, { recursive: true, force: true });
  await fs.mkdir(outDir, { recursive: true });
  const written: string[] = [];
  for (const { file, docs } of parsed) {
    const out: Doc[] = [];
    for (const d of docs) {
      if (!d) continue;
      if (d.kind === 'AzureFlexNodeClass') {
        const r = retarget(d, config);
        if (r) out.push(r);
      } else if (d.kind === 'NodePool') {
        if (served.has(d.spec?.template?.spec?.nodeClassRef?.name ?? '')) out.push(d);
      } else {
        out.push(d);
      }
    }
    if (out.length === 0) continue;
    await fs.writeFile(path.join(outDir, file), out.map((d) => stringify(d)).join('---\n'));
    written.push(file);
  }
  for (const sub of subdirs) {
    for (const file of await writeDevExamples(path.join(srcDir, sub), path.join(outDir, sub), config)) written.push(path.join(sub, file));
  }
  return written;
}
