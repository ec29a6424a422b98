import { createHash } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import * as path from 'node:path';
import {
  ApiException,
  AppsV1Api,
  AuthenticationV1Api,
  AuthorizationV1Api,
  CoordinationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  EventsV1Api,
  StorageV1Api,
  KubeConfig,
  PatchStrategy,
  ServerConfiguration,
  VersionApi,
  Watch,
  createConfiguration,
  Observable,
  type ConfigurationOptions,
  type ObservableMiddleware,
  type RequestContext,
  type ResponseContext,
} from '@kubernetes/client-node';
import { ClusterError } from '../ports/cluster.js';
import { IN_CLUSTER_SA_DIR } from '../apis/well-known.js';

/**
 * The one way azflex reaches an API server: @kubernetes/client-node's KubeConfig (kubeconfig
 * files with client certificates, tokens and exec plugins such as kubelogin; in-cluster
 * ServiceAccount with the token re-read for rotation), its generated typed APIs, and its
 * Watch. What this file adds:
 *  - request hooks, attached to every call as client-node middleware (PromiseMiddleware on
 *    the RequestContext / ResponseContext): the RBAC audit records each request, and tests
 *    inject faults (a partition) by throwing from `before`. Watches do not go through
 *    client-node's middleware, so `AuditedWatch` calls the same hooks;
 *  - errors mapped to one typed ClusterError with the HTTP code (KubeApiError);
 *  - one connection pool per KubeConfig (`shareDispatchers`), which client-node does not keep.
 */

export interface RequestInfo {
  method: string;
  /** Path without query string, e.g. /apis/karpenter.sh/v1/nodeclaims/x/status. */
  path: string;
  /** True for a watch (a GET with watch=true). */
  watch: boolean;
}

export interface RequestRecord extends RequestInfo {
  /** HTTP status; 0 when no response arrived. */
  status: number;
}

export interface RequestHooks {
  /** Before the request is sent; throwing fails the request without sending it. */
  before?(req: RequestInfo): void;
  /** After the response (or the watch stream's opening). */
  after?(rec: RequestRecord): void;
}

/** Kubernetes `Status` body returned with errors. */
export interface KubeStatus {
  kind?: string;
  status?: string;
  message?: string;
  reason?: string;
  code?: number;
}

export class KubeApiError extends ClusterError {
  constructor(
    reason: ClusterError['reason'],
    message: string,
    /** HTTP status code (410 Gone, 429 Too Many Requests, ... survive here); 0 without a response. */
    readonly code: number,
    readonly status?: KubeStatus,
  ) {
    super(reason, message);
  }
}

export function errorFor(code: number, status: KubeStatus | undefined, fallback: string): KubeApiError {
  const message = status?.message ?? fallback;
  const reason: ClusterError['reason'] =
    code === 404
      ? 'NotFound'
      : code === 409
        ? status?.reason === 'AlreadyExists'
          ? 'AlreadyExists'
          : 'Conflict'
        : code === 403
          ? 'Forbidden'
          : code === 400 || code === 422
            ? 'Invalid'
            : code === 429
              ? 'TooManyRequests'
              : 'ServerError';
  return new KubeApiError(reason, message, code, status);
}

function statusOf(body: unknown): KubeStatus | undefined {
  if (typeof body === 'string') {
    try {
      return statusOf(JSON.parse(body) as unknown);
    } catch {
      return { message: body.slice(0, 500) };
    }
  }
  return typeof body === 'object' && body !== null ? (body as KubeStatus) : undefined;
}

/** Any failure of a client-node call as a KubeApiError (ClusterErrors, e.g. injected faults, pass through). */
export function toKubeError(e: unknown, what: string): ClusterError {
  if (e instanceof ClusterError) return e;
  if (e instanceof ApiException) return errorFor(e.code, statusOf(e.body), `${what}: HTTP ${e.code}`);
  const code = (e as { statusCode?: unknown }).statusCode;
  if (typeof code === 'number') return errorFor(code, undefined, `${what}: HTTP ${code}`);
  return new KubeApiError('ServerError', `${what}: ${e instanceof Error ? e.message : String(e)}`, 0);
}

export interface KubeClientOptions {
  userAgent?: string;
  hooks?: RequestHooks[];
}

export interface CallOptions {
  /** Patch flavour; client-node's typed patch calls default to JSON Patch otherwise. */
  patch?: PatchStrategy;
}

/**
 * A Watch that reports to the request hooks and can be shut: once `close()` is called it
 * opens no new stream. (client-node's ListWatch, stopped while its list is in flight, still
 * opens the watch that follows the list: see test/k8s/client-node-defects.test.ts.)
 */
export class AuditedWatch extends Watch {
  private closed = false;
  /** Called each time a watch stream opened (HTTP 200). */
  onOpen: (() => void) | undefined;
  /** Applied to each ADDED, MODIFIED and DELETED object before the callback sees it. */
  transform: ((obj: unknown) => unknown) | undefined;

  constructor(
    kc: KubeConfig,
    private readonly hooks: () => readonly RequestHooks[],
    private readonly extraQuery: Record<string, string | number | boolean> = {},
  ) {
    super(kc);
  }

  close(): void {
    this.closed = true;
  }

  reopen(): void {
    this.closed = false;
  }

  override async watch(
    watchPath: string,
    queryParams: Record<string, string | number | boolean | undefined>,
    callback: (phase: string, apiObj: unknown, watchObj?: unknown) => void,
    done: (err: unknown) => void,
  ): Promise<AbortController> {
    const info: RequestInfo = { method: 'GET', path: watchPath, watch: true };
    if (this.closed) return new AbortController();
    let status = 200;
    try {
      for (const h of this.hooks()) h.before?.(info);
    } catch (e) {
      // The watch fails the way a broken connection would: through `done`.
      for (const h of this.hooks()) h.after?.({ ...info, status: 0 });
      done(e);
      return new AbortController();
    }
    const transform = this.transform;
    const deliver = transform
      ? (phase: string, apiObj: unknown, watchObj?: unknown): void =>
        callback(phase, phase === 'ADDED' || phase === 'MODIFIED' || phase === 'DELETED' ? transform(apiObj) : apiObj, watchObj)
      : callback;
    const controller = await super.watch(watchPath, { ...queryParams, ...this.extraQuery }, deliver, (err) => {
      const code = (err as { statusCode?: unknown } | null)?.statusCode;
      if (typeof code === 'number') status = code;
      done(err);
    });
    for (const h of this.hooks()) h.after?.({ ...info, status });
    if (status === 200 && !controller.signal.aborted) this.onOpen?.();
    return controller;
  }
}

/** What client-node hands fetch as its `dispatcher` (an undici Agent); only closing it matters here. */
interface Dispatcher {
  close(): Promise<void>;
}

type DispatcherFactory = (cluster: unknown, agentOptions: Record<string, unknown>) => Dispatcher | undefined;
const SHARED = Symbol('azflex.sharedDispatchers');

/**
 * client-node 2.0.1 builds a new undici Agent, so a new TLS connection, for every request and
 * every watch (KubeConfig.createDispatcher has no cache, unlike its https.Agent path). At scale
 * that is a TLS handshake per call on both ends and, measured, hundreds of MiB of native memory
 * in the controller for the sockets kept alive and the TLS contexts behind them. This keeps one
 * Agent per distinct connection setting (server, proxy, TLS material: a rotated client
 * certificate gets a new Agent, and the old one closes once its requests finish).
 * Test: test/k8s/client-node-defects.test.ts.
 */
export function shareDispatchers(kc: KubeConfig): void {
  const target = kc as unknown as { createDispatcher: DispatcherFactory; [SHARED]?: true };
  if (target[SHARED]) return;
  const create = target.createDispatcher.bind(kc);
  let current: { key: string; dispatcher: Dispatcher | undefined } | undefined;
  target.createDispatcher = (cluster, agentOptions) => {
    const key = settingsKey(kc.createDispatcherOptions(cluster as Parameters<KubeConfig['createDispatcherOptions']>[0], agentOptions), cluster);
    if (current?.key === key) return current.dispatcher;
    const previous = current?.dispatcher;
    current = { key, dispatcher: create(cluster, agentOptions) };
    // Graceful: requests and watches in flight on the old Agent finish first.
    void previous?.close().catch(() => undefined);
    return current.dispatcher;
  };
  target[SHARED] = true;
}

/** A digest of everything a connection is made from (buffers by content). */
function settingsKey(options: object, cluster: unknown): string {
  const hash = createHash('sha256');
  const server = (cluster as { server?: unknown } | null)?.server;
  hash.update(`server=${typeof server === 'string' ? server : ''}\n`);
  const walk = (v: unknown, at: string): void => {
    if (Buffer.isBuffer(v) || v instanceof Uint8Array) hash.update(`${at}=`).update(v).update('\n');
    else if (Array.isArray(v)) v.forEach((x, i) => walk(x, `${at}[${i}]`));
    else if (typeof v === 'object' && v !== null) for (const k of Object.keys(v).sort()) walk((v as Record<string, unknown>)[k], `${at}.${k}`);
    else if (v !== undefined) hash.update(`${at}=${String(v)}\n`);
  };
  walk(options, '');
  return hash.digest('base64');
}

/** Typed API clients on one KubeConfig, every call through the request hooks and error mapping. */
export class KubeClient {
  readonly core: CoreV1Api;
  readonly apps: AppsV1Api;
  readonly custom: CustomObjectsApi;
  readonly coordination: CoordinationV1Api;
  readonly events: EventsV1Api;
  readonly storage: StorageV1Api;
  readonly version: VersionApi;
  /** TokenReview and SubjectAccessReview: the secure metrics endpoint's authentication and authorization. */
  readonly authentication: AuthenticationV1Api;
  readonly authorization: AuthorizationV1Api;
  private readonly hooks: RequestHooks[];

  constructor(
    readonly kc: KubeConfig,
    private readonly options: KubeClientOptions = {},
  ) {
    const cluster = kc.getCurrentCluster();
    if (!cluster) throw new Error('kubeconfig has no current cluster');
    shareDispatchers(kc);
    this.hooks = [...(options.hooks ?? [])];
    const config = createConfiguration({ baseServer: new ServerConfiguration(cluster.server, {}), authMethods: { default: kc } });
    this.core = new CoreV1Api(config);
    this.apps = new AppsV1Api(config);
    this.custom = new CustomObjectsApi(config);
    this.coordination = new CoordinationV1Api(config);
    this.events = new EventsV1Api(config);
    this.storage = new StorageV1Api(config);
    this.version = new VersionApi(config);
    this.authentication = new AuthenticationV1Api(config);
    this.authorization = new AuthorizationV1Api(config);
  }

  get server(): string {
    return this.kc.getCurrentCluster()?.server ?? '';
  }

  /** Adds hooks (an audit, an injected fault); returns the function that removes them. */
  use(hooks: RequestHooks): () => void {
    this.hooks.push(hooks);
    return () => {
      const i = this.hooks.indexOf(hooks);
      if (i >= 0) this.hooks.splice(i, 1);
    };
  }

  /** A Watch for client-node's ListWatch that reports to this client's hooks. */
  newWatch(extraQuery?: Record<string, string | number | boolean>): AuditedWatch {
    return new AuditedWatch(this.kc, () => this.hooks, extraQuery);
  }

  /**
   * Runs one typed API call with this client's middleware. A middleware per call, because
   * a ResponseContext does not say which request it answers.
   */
  async call<T>(what: string, fn: (options: ConfigurationOptions) => Promise<T>, o: CallOptions = {}): Promise<T> {
    let info: RequestInfo | undefined;
    let recorded = false;
    const hooks = [...this.hooks];
    const record = (status: number): void => {
      if (!info || recorded) return;
      recorded = true;
      for (const h of hooks) h.after?.({ ...info, status });
    };
    // The typed ObjectParam APIs take client-node's Observable middleware (its rxjs stub).
    const middleware: ObservableMiddleware = {
      pre: (ctx: RequestContext) =>
        new Observable(
          (async () => {
            info = { method: ctx.getHttpMethod().toString(), path: new URL(ctx.getUrl()).pathname, watch: false };
            ctx.setHeaderParam('User-Agent', this.options.userAgent ?? 'azflex');
            if (o.patch) ctx.setHeaderParam('Content-Type', o.patch);
            for (const h of hooks) h.before?.(info);
            return ctx;
          })(),
        ),
      post: (rsp: ResponseContext) => {
        record(rsp.httpStatusCode);
        return new Observable(Promise.resolve(rsp));
      },
    };
    try {
      return await fn({ middleware: [middleware], middlewareMergeStrategy: 'append' });
    } catch (e) {
      record(0);
      throw toKubeError(e, what);
    }
  }
}

export { PatchStrategy };

// --- where the configuration comes from -----------------------------------------------------

export { IN_CLUSTER_SA_DIR };

/**
 * kubectl's order: an explicit file, else $KUBECONFIG (client-node merges its entries), else
 * ~/.kube/config, else the in-cluster ServiceAccount (token file re-read by client-node, so
 * kubelet's rotation applies). Unlike client-node's loadFromDefault, finding nothing is an
 * error rather than a silent http://localhost:8080.
 */
export function loadKubeConfig(o: { file?: string; context?: string } = {}): KubeConfig {
  const kc = new KubeConfig();
  if (o.file) {
    const st = statSync(o.file, { throwIfNoEntry: false });
    if (!st) throw new KubeConfigError(`kubeconfig ${o.file} does not exist`);
    // Never a FIFO or a device (a read that blocks or never ends), never a huge file.
    if (!st.isFile()) throw new KubeConfigError(`kubeconfig ${o.file}: not a regular file`);
    if (st.size > MAX_KUBECONFIG_BYTES) throw new KubeConfigError(`kubeconfig ${o.file}: ${st.size} bytes, more than the ${MAX_KUBECONFIG_BYTES}-byte limit`);
    try {
      kc.loadFromFile(o.file);
    } catch (err) {
      throw new KubeConfigError(`kubeconfig ${o.file}: ${err instanceof Error ? err.message : String(err)}`);
    }
  } else if (process.env.KUBECONFIG || existsSync(path.join(homedir(), '.kube', 'config'))) {
    kc.loadFromDefault();
  } else if (process.env.KUBERNETES_SERVICE_HOST) {
    return withContext(inClusterKubeConfig(), o.context);
  } else {
    throw new KubeConfigError('no kubeconfig: pass --kubeconfig, set KUBECONFIG, or run in a cluster (KUBERNETES_SERVICE_HOST is unset)');
  }
  return withContext(kc, o.context);
}

/** Largest kubeconfig file read (kubectl's are a few KiB, with embedded certificates). */
const MAX_KUBECONFIG_BYTES = 1024 * 1024;

/** A kubeconfig that cannot be used: bad input, refused before the controller starts. */
export class KubeConfigError extends Error {
  override readonly name = 'KubeConfigError';
}

function withContext(kc: KubeConfig, context: string | undefined): KubeConfig {
  if (context) {
    if (!kc.getContextObject(context)) throw new KubeConfigError(`kubeconfig has no context "${context}"`);
    kc.setCurrentContext(context);
  }
  if (!kc.getCurrentCluster()) throw new KubeConfigError(`kubeconfig has no cluster for context "${kc.getCurrentContext()}"`);
  return kc;
}

/**
 * The pod's ServiceAccount: KUBERNETES_SERVICE_HOST/PORT and the files under
 * /var/run/secrets/kubernetes.io/serviceaccount (`pathPrefix` roots them elsewhere, for
 * tests and chroots). client-node re-reads the token file at most 60 s after it changed
 * (client-go does the same), so kubelet's token rotation applies without a restart. A
 * token file ending in a newline (a hand-mounted Secret) needs no trimming here: requests and
 * watches go through undici's fetch, which strips it from the header value
 * (test/k8s/in-cluster-config.test.ts).
 */
export function inClusterKubeConfig(pathPrefix = ''): KubeConfig {
  if (!process.env.KUBERNETES_SERVICE_HOST) throw new Error('not running in a cluster: KUBERNETES_SERVICE_HOST is unset');
  const kc = new KubeConfig();
  kc.loadFromCluster(pathPrefix);
  return kc;
}

/** A bearer token (a ServiceAccount's, in RBAC tests) against a server with a known CA. */
export function tokenKubeConfig(server: string, caData: string, token: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'cluster', server, caData, skipTLSVerify: false }],
    users: [{ name: 'user', token }],
    contexts: [{ name: 'ctx', cluster: 'cluster', user: 'user' }],
    currentContext: 'ctx',
  });
  return kc;
}

/** kubeconfig YAML text; relative file paths resolve against `baseDir`. */
export function kubeConfigFromYaml(text: string, baseDir?: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromString(text);
  if (baseDir) kc.makePathsAbsolute(baseDir);
  return kc;
}
