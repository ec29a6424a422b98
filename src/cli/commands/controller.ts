import { InvalidArgumentError, Option, type Command } from 'commander';
import { NO_PRICE_OVERRIDES, parsePriceOverrides, type PriceOverrides } from '../../catalog/prices.js';
import { parseDuration } from '../../utils/duration.js';
import { IN_CLUSTER_SA_DIR } from '../../apis/well-known.js';
import { AKS_FLEX_NODE_VERSION, parseAgentSha256 } from '../../azure/userdata/node-agent.js';
import type { ControllerSettings } from '../../app/production.js';
import { UsageError } from '../errors.js';
import { bounded, REPAIR_POLICIES_HELP, repairPoliciesFlag } from '../flags.js';

/** What commander parses: the settings, with the durations and the price file as the flags name them. */
type ControllerFlags = Omit<ControllerSettings, 'leaseDurationMs' | 'renewDeadlineMs' | 'retryPeriodMs' | 'skuCatalogRefreshMs' | 'prices' | 'env'> & {
  leaseDuration: number;
  renewDeadline: number;
  retryPeriod: number;
  skuCatalogRefresh: number;
  priceOverrides?: string;
};

/** A Go-style duration from `min` to `max` (one bound per flag, documented in its help). */
function duration(min: number, max: number) {
  const range = `${formatMs(min)} … ${formatMs(max)}`;
  return (raw: string): number => {
    let ms: number | undefined;
    try {
      ms = parseDuration(raw);
    } catch {
      ms = undefined;
    }
    if (ms === undefined || !(ms >= min && ms <= max)) throw new InvalidArgumentError(`must be a duration like 15s or 1m from ${range}, got "${raw}"`);
    return ms;
  };
}

function formatMs(ms: number): string {
  return ms % 3_600_000 === 0 ? `${ms / 3_600_000}h` : ms % 60_000 === 0 ? `${ms / 60_000}m` : `${ms / 1000}s`;
}

const LEASE_MAX_MS = 10 * 60_000;
const REFRESH_MIN_MS = 60_000;
const REFRESH_MAX_MS = 7 * 24 * 3_600_000;

/** AKS cluster names: 1 to 63 letters, digits, hyphens and underscores (stamped on every resource). */
function clusterName(raw: string): string {
  if (!/^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$/.test(raw)) throw new InvalidArgumentError(`must be 1 to 63 letters, digits, hyphens or underscores, starting with a letter or digit, got "${raw.slice(0, 80)}"`);
  return raw;
}

/**
 * Azure resource group names: 1 to 90 letters, digits, underscores, hyphens, periods and
 * parentheses, not ending in a period.
 */
function resourceGroup(raw: string): string {
  if (!/^[-\w.()]{0,89}[-\w()]$/u.test(raw)) throw new InvalidArgumentError(`must be an Azure resource group name (1 to 90 letters, digits, _ - . ( ), not ending in .), got "${raw.slice(0, 100)}"`);
  return raw;
}

function httpsUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new InvalidArgumentError(`must be an https:// URL, got "${raw.slice(0, 200)}"`);
  }
  if (url.protocol !== 'https:') throw new InvalidArgumentError(`must be an https:// URL, got "${raw.slice(0, 200)}"`);
  return raw;
}

function agentSha256Flag(raw: string): ControllerSettings['nodeAgentSha256'] {
  try {
    return parseAgentSha256(raw);
  } catch (e) {
    throw new InvalidArgumentError((e as Error).message);
  }
}

function bool(raw: string): boolean {
  if (raw === 'true') return true;
  if (raw === 'false') return false;
  throw new InvalidArgumentError(`must be true or false, got "${raw}"`);
}

/**
 * `azflex controller`: the in-cluster process (src/app/production.ts). This file only
 * turns flags into its settings.
 */
export function register(program: Command): void {
  program
    .command('controller')
    .description('run the controller against a real cluster and real Azure (what the Helm chart deploys)')
    .requiredOption('--cluster-name <name>', 'stamped on every Azure resource azflex creates (its tag, and a hash of it in the name); must be unique per cluster (1 to 63 letters, digits, - or _)', clusterName)
    .option('--node-resource-group <name>', 'the AKS cluster\'s node resource group (MC_…; env AZURE_NODE_RESOURCE_GROUP, as the Azure Karpenter provider reads it): nodes get it as kubernetes.azure.com/cluster, which AKS DaemonSets require', resourceGroup, process.env.AZURE_NODE_RESOURCE_GROUP || undefined)
    .option('--kubeconfig <file>', 'kubeconfig (default: $KUBECONFIG, ~/.kube/config, then in-cluster)')
    .option('--context <name>', 'kubeconfig context')
    .addOption(new Option('--log-level <level>').choices(['debug', 'info', 'warn', 'error']).default('info'))
    .option('--metrics-port <port>', '/metrics, /healthz, /readyz', bounded('--metrics-port', 1, 65535), 8080)
    .option('--metrics-secure <bool>', 'serve over HTTPS; /metrics only to bearer tokens a TokenReview authenticates and a SubjectAccessReview allows get on /metrics (probes stay open)', bool, false)
    .option('--metrics-cert-dir <dir>', 'tls.crt and tls.key for --metrics-secure (default: a self-signed pair made at start)')
    .option('--leader-elect <bool>', 'run active/standby on a Lease', bool, true)
    .option('--leader-election-namespace <ns>', 'namespace of the Lease', process.env.POD_NAMESPACE ?? 'azflex')
    .option('--leader-election-lease <name>', 'name of the Lease', 'azflex-controller')
    .option('--lease-duration <d>', 'Lease duration (1s … 10m; above --renew-deadline)', duration(1000, LEASE_MAX_MS), 15_000)
    .option('--renew-deadline <d>', 'give up leadership if not renewed within (1s … 10m; above --retry-period)', duration(1000, LEASE_MAX_MS), 10_000)
    .option('--retry-period <d>', 'Lease poll period (100ms … 10m)', duration(100, LEASE_MAX_MS), 2_000)
    .option('--arm-endpoint <url>', 'ARM endpoint (default https://management.azure.com; the simulator’s for azflex sim serve-arm)', httpsUrl)
    .option('--arm-ca-file <file>', 'extra CA to trust for --arm-endpoint (the simulator’s self-signed CA)')
    .option('--api-server-endpoint <url>', 'API server URL as nodes in other regions reach it (the AKS FQDN)', process.env.AZFLEX_API_SERVER_ENDPOINT ?? '')
    .option('--cluster-ca-file <file>', 'cluster CA for node bootstrap', `${IN_CLUSTER_SA_DIR}/ca.crt`)
    .option('--bootstrap-token-secret <name>', 'Secret (in the leader-election namespace) holding a kubeadm bootstrap token (re-read every 5 minutes and when it expires)', 'azflex-bootstrap-token')
    .option('--node-agent-version <tag>', 'aks-flex-node release the nodes run', AKS_FLEX_NODE_VERSION)
    .option('--node-agent-sha256 <arch=hex,...>', 'sha256 of each architecture\'s aks-flex-node tarball (amd64=…,arm64=…); a node refuses any other, and no VM of an unpinned architecture is created', agentSha256Flag, {})
    .option('--node-agent-url <url>', 'where aks-flex-node releases are downloaded from (<url>/<tag>/aks-flex-node-linux-<arch>.tar.gz; a mirror for air-gapped clusters)', httpsUrl)
    .addOption(new Option('--sku-catalog <source>', 'instance types: live from the Resource SKUs API per NodeClass subscription and location, or the built-in static list (offline)').choices(['live', 'static']).default('live'))
    .option('--sku-catalog-refresh <d>', 'how often the Resource SKUs listing of each subscription and location is refreshed (1m … 168h)', duration(REFRESH_MIN_MS, REFRESH_MAX_MS), 60 * 60_000)
    .option('--price-overrides <file>', 'YAML/JSON map of VM size to USD/hour (spot prices under `spot`), used only to rank offerings (the chart mounts its `prices` value here)')
    .option('--repair-policies <Type=Status:toleration,...>', REPAIR_POLICIES_HELP, repairPoliciesFlag)
    .option('--live-view-port <port>', 'serve the read-only live view of the actors on 127.0.0.1:<port> (kubectl port-forward to see it)', bounded('--live-view-port', 1, 65535))
    .action(async (flags: ControllerFlags) => {
      // Leader election needs lease > renew deadline > retry period (client-go's rule).
      if (!(flags.leaseDuration > flags.renewDeadline)) throw new UsageError(`--lease-duration (${formatMs(flags.leaseDuration)}) must be longer than --renew-deadline (${formatMs(flags.renewDeadline)})`);
      if (!(flags.renewDeadline > flags.retryPeriod)) throw new UsageError(`--renew-deadline (${formatMs(flags.renewDeadline)}) must be longer than --retry-period (${formatMs(flags.retryPeriod)})`);
      // The environment's value is the flag's default, which commander does not parse.
      if (flags.nodeResourceGroup !== undefined) {
        try {
          resourceGroup(flags.nodeResourceGroup);
        } catch (e) {
          throw new UsageError(`--node-resource-group (or AZURE_NODE_RESOURCE_GROUP) ${(e as Error).message}`);
        }
      }
      const prices = flags.priceOverrides ? await readPriceOverrides(flags.priceOverrides) : NO_PRICE_OVERRIDES;
      await checkKubeconfig(flags.kubeconfig);
      const { priceOverrides: _file, leaseDuration, renewDeadline, retryPeriod, skuCatalogRefresh, ...rest } = flags;
      // Flags checked: now load client-node, the SDKs and the runtime.
      const [{ runController }, { KubeConfigError }] = await Promise.all([import('../../app/production.js'), import('../../k8s/client.js')]);
      const proc = await runController({
        ...rest,
        leaseDurationMs: leaseDuration,
        renewDeadlineMs: renewDeadline,
        retryPeriodMs: retryPeriod,
        skuCatalogRefreshMs: skuCatalogRefresh,
        prices,
      }).catch((err: unknown) => {
        // A kubeconfig that cannot be used is a bad flag or file, not a crash.
        if (err instanceof KubeConfigError) throw new UsageError(err.message);
        throw err;
      });
      process.exitCode = await proc.done;
    });
}

/**
 * The kubeconfig files as cheap checks, before client-node (seconds and 270 MB to load) sees
 * them: --kubeconfig a regular file of at most 1 MiB holding one YAML mapping, the files of
 * $KUBECONFIG the same, or some source at all (kubectl's order; in-cluster last).
 */
async function checkKubeconfig(file: string | undefined): Promise<void> {
  const { existsSync } = await import('node:fs');
  const { homedir } = await import('node:os');
  const { join, delimiter } = await import('node:path');
  const { InputFileError, parseYamlDocuments, readBoundedFile } = await import('../../sim/input-files.js');
  const check = (f: string): void => {
    try {
      const docs = parseYamlDocuments(readBoundedFile(f), `kubeconfig ${f}`);
      if (docs.length !== 1 || typeof docs[0] !== 'object' || Array.isArray(docs[0])) throw new InputFileError(`kubeconfig ${f}: one YAML mapping expected (apiVersion, clusters, contexts, users)`);
    } catch (err) {
      if (!(err instanceof InputFileError)) throw err;
      throw new UsageError(/cannot read \(ENOENT\)/.test(err.message) ? `kubeconfig ${f} does not exist` : err.message.replace(/^(?!kubeconfig )/, 'kubeconfig '));
    }
  };
  if (file !== undefined) return check(file);
  const env = process.env.KUBECONFIG;
  if (env) {
    for (const f of env.split(delimiter).filter((x) => x !== '' && existsSync(x))) check(f);
    return;
  }
  const home = join(homedir(), '.kube', 'config');
  if (existsSync(home)) return check(home);
  if (!process.env.KUBERNETES_SERVICE_HOST) throw new UsageError('no kubeconfig: pass --kubeconfig, set KUBECONFIG, or run in a cluster (KUBERNETES_SERVICE_HOST is unset)');
}

async function readPriceOverrides(file: string): Promise<PriceOverrides> {
  const { InputFileError, parseYamlDocuments, readBoundedFile } = await import('../../sim/input-files.js');
  let docs: unknown[];
  try {
    // Size-capped regular file (never a FIFO or /dev/zero), alias- and depth-limited YAML.
    docs = parseYamlDocuments(readBoundedFile(file), file);
  } catch (err) {
    if (err instanceof InputFileError) throw new UsageError(`--price-overrides: ${err.message}`);
    throw err;
  }
  if (docs.length > 1) throw new UsageError(`--price-overrides: ${file}: one YAML document expected, found ${docs.length}`);
  try {
    return parsePriceOverrides(docs[0] ?? {}, file);
  } catch (err) {
    throw new UsageError(`--price-overrides: ${err instanceof Error ? err.message : String(err)}`);
  }
}
