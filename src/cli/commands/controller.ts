import { InvalidArgumentError, Option, type Command } from 'commander';
import { parsePriceOverrides } from '../../catalog/prices.js';
import { parseDuration } from '../../disruption/duration.js';
import { IN_CLUSTER_SA_DIR } from '../../k8s/client.js';
import { runController, type ControllerSettings } from '../../k8s/controller-main.js';
import { UsageError } from '../errors.js';
import { bounded } from './simulate.js';

/** What commander parses: the settings, with the durations and the price file as the flags name them. */
type ControllerFlags = Omit<ControllerSettings, 'leaseDurationMs' | 'renewDeadlineMs' | 'retryPeriodMs' | 'skuCatalogRefreshMs' | 'prices' | 'env'> & {
  leaseDuration: number;
  renewDeadline: number;
  retryPeriod: number;
  skuCatalogRefresh: number;
  priceOverrides?: string;
};

function duration(raw: string): number {
  try {
    const ms = parseDuration(raw);
    if (ms === undefined || ms <= 0) throw new Error('not positive');
    return ms;
  } catch {
    throw new InvalidArgumentError(`must be a duration like 15s or 1m, got "${raw}"`);
  }
}

function bool(raw: string): boolean {
  if (raw === 'true') return true;
  if (raw === 'false') return false;
  throw new InvalidArgumentError(`must be true or false, got "${raw}"`);
}

/**
 * `azflex controller`: the in-cluster process (src/k8s/controller-main.ts). This file only
 * turns flags into its settings.
 */
export function register(program: Command): void {
  program
    .command('controller')
    .description('run the controller against a real cluster and real Azure (what the Helm chart deploys)')
    .requiredOption('--cluster-name <name>', 'stamped on every Azure resource azflex creates; must be unique per cluster')
    .option('--kubeconfig <file>', 'kubeconfig (default: $KUBECONFIG, ~/.kube/config, then in-cluster)')
    .option('--context <name>', 'kubeconfig context')
    .addOption(new Option('--log-level <level>').choices(['debug', 'info', 'warn', 'error']).default('info'))
    .option('--metrics-port <port>', '/metrics, /healthz, /readyz', bounded('--metrics-port', 1, 65535), 8080)
    .option('--leader-elect <bool>', 'run active/standby on a Lease', bool, true)
    .option('--leader-election-namespace <ns>', 'namespace of the Lease', process.env.POD_NAMESPACE ?? 'azflex')
    .option('--leader-election-lease <name>', 'name of the Lease', 'azflex-controller')
    .option('--lease-duration <d>', 'Lease duration', duration, 15_000)
    .option('--renew-deadline <d>', 'give up leadership if not renewed within', duration, 10_000)
    .option('--retry-period <d>', 'Lease poll period', duration, 2_000)
    .option('--arm-endpoint <url>', 'ARM endpoint (default https://management.azure.com; the simulator’s for azflex sim serve-arm)')
    .option('--arm-ca-file <file>', 'extra CA to trust for --arm-endpoint (the simulator’s self-signed CA)')
    .option('--api-server-endpoint <url>', 'API server URL as nodes in other regions reach it (the AKS FQDN)', process.env.AZFLEX_API_SERVER_ENDPOINT ?? '')
    .option('--cluster-ca-file <file>', 'cluster CA for node bootstrap', `${IN_CLUSTER_SA_DIR}/ca.crt`)
    .option('--bootstrap-token-secret <name>', 'Secret (in the leader-election namespace) holding a kubeadm bootstrap token', 'azflex-bootstrap-token')
    .addOption(new Option('--sku-catalog <source>', 'instance types: live from the Resource SKUs API per NodeClass subscription and location, or the built-in static list (offline)').choices(['live', 'static']).default('live'))
    .option('--sku-catalog-refresh <d>', 'how often the Resource SKUs listing of each subscription and location is refreshed', duration, 60 * 60_000)
    .option('--price-overrides <file>', 'YAML/JSON map of VM size to USD/hour, used only to rank sizes (the chart mounts its `prices` value here)')
    .option('--live-view-port <port>', 'serve the read-only live view of the actors on 127.0.0.1:<port> (kubectl port-forward to see it)', bounded('--live-view-port', 1, 65535))
    .action(async (flags: ControllerFlags) => {
      const prices = flags.priceOverrides ? await readPriceOverrides(flags.priceOverrides) : {};
      const { priceOverrides: _file, leaseDuration, renewDeadline, retryPeriod, skuCatalogRefresh, ...rest } = flags;
      const proc = await runController({
        ...rest,
        leaseDurationMs: leaseDuration,
        renewDeadlineMs: renewDeadline,
        retryPeriodMs: retryPeriod,
        skuCatalogRefreshMs: skuCatalogRefresh,
        prices,
      });
      process.exitCode = await proc.done;
    });
}

async function readPriceOverrides(file: string): Promise<Record<string, number>> {
  const { readFile } = await import('node:fs/promises');
  const { parse } = await import('yaml');
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new UsageError(`--price-overrides: cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  try {
    return parsePriceOverrides(parse(text), file);
  } catch (err) {
    throw new UsageError(`--price-overrides: ${err instanceof Error ? err.message : String(err)}`);
  }
}
