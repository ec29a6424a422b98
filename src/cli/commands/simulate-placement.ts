import type { FakeCluster } from '../../sim/cluster.js';
import type { Placement } from '../../sim/placement.js';
import { UsageError } from '../errors.js';
import { checkOutputPath, writeOutput } from './output-file.js';

/**
 * Where things landed, for `azflex simulate`: the placement in `--json` (single runs only: a
 * sweep prints per-seed figures, and a placement per seed of a 1,000-seed sweep would be
 * megabytes nobody reads; replay one seed for its placement) and `--output-cluster`.
 */

interface PlacementFlags {
  outputCluster?: string;
  seeds?: number[];
  strategy: string;
  json?: boolean;
}

/** Checked before the run: `--output-cluster` writes one run's cluster to a file that can be written. */
export function checkPlacementFlags(flags: PlacementFlags): void {
  if (flags.outputCluster === undefined) return;
  if (flags.seeds) throw new UsageError('--output-cluster writes one run\'s cluster: it does not go with --seeds (replay one seed of the sweep with --seed)');
  if (flags.strategy === 'all') throw new UsageError('--output-cluster writes one run\'s cluster: pass --strategy <name>');
  checkOutputPath('--output-cluster', flags.outputCluster);
}

/**
 * After each run, while its cluster is at hand (a 10,000-pod run's is not kept for the next):
 * writes `--output-cluster`, and returns the run's placement for `--json` (none without it).
 */
export async function placementOfRun(flags: PlacementFlags, cluster: FakeCluster): Promise<Placement | undefined> {
  if (flags.outputCluster !== undefined) {
    const { clusterYaml } = await import('../../sim/cluster-yaml.js');
    if (writeOutput('--output-cluster', flags.outputCluster, clusterYaml(cluster)) && !flags.json) {
      process.stderr.write(`cluster written to ${flags.outputCluster}\n`);
    }
  }
  if (!flags.json) return undefined;
  const { placementOf } = await import('../../sim/placement.js');
  return placementOf(cluster);
}
