import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import * as net from 'node:net';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { buildImage, type BuiltImage } from '../../scripts/build-image.mjs';
import { DEFAULT_RESOURCE_GROUP, DEFAULT_SUBNET_ID, defaultFakeArmConfig } from '../../src/sim/arm/defaults.js';
import { renderChart, type K8sObject } from './chart-render.js';
import { adminRequest, eventually, kubectl, mintServiceAccountToken, run } from './harness.js';
import { createH200Pool, createUnschedulableGpuPod, ensureNamespace, forceDelete } from './fixtures.js';
import { freePort } from '../../src/dev/control-plane.js';

const info = inject('k8s');
const ns = 'azflex-image';
const release = 'azflex';
const podName = 'azflex-6d4b8c7f9-image';
const AFNC = '/apis/flex.aks.azure.com/v1alpha1/azureflexnodeclasses';
const NC = '/apis/karpenter.sh/v1/nodeclaims';
const repo = path.resolve(import.meta.dirname, '../..');
/** Where the test mounts the simulator's CA inside the container (a test-only volume). */
const SIM_CA_DIR = '/var/run/azflex-sim';
const SA_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

interface Bundle {
  process: { args: string[]; env: string[]; cwd: string; user: { uid: number; gid: number } };
}
interface Container {
  args: string[];
  env: Array<{ name: string; value?: string; valueFrom?: { fieldRef?: { fieldPath: string } } }>;
  securityContext: { readOnlyRootFilesystem: boolean; runAsNonRoot: boolean };
}
interface RawNodeClaim {
  metadata: { name: string };
  spec: { nodeClassRef: { name: string } };
  status?: { providerID?: string; conditions?: Array<{ type: string; status: string }> };
}


/** GET on the fake ARM over HTTPS, trusting its CA (any bearer token is accepted there). */
function armGet(endpoint: string, ca: Buffer, apiPath: string): Promise<{ value: Array<{ name: string; properties?: { provisioningState?: string } }> }> {
  return new Promise((resolve, reject) => {
    https
      .get(`${endpoint}${apiPath}`, { ca, headers: { authorization: 'Bearer test' } }, (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => ((res.statusCode ?? 0) < 300 ? resolve(JSON.parse(text)) : reject(new Error(`ARM ${res.statusCode}: ${text}`))));
      })
      .on('error', reject);
  });
}

/**
 * App Service's managed identity endpoint (IDENTITY_ENDPOINT + IDENTITY_HEADER), which
 * @azure/identity's DefaultAzureCredential reads: the container gets an ARM token the way a
 * real one does, through the SDK's own credential chain, without Entra ID (no internet here).
 */
function startIdentityEndpoint(secret: string): Promise<{ url: string; requests: string[]; close: () => void }> {
  const requests: string[] = [];
  const server = http.createServer((req, res) => {
    requests.push(req.url ?? '');
    if (req.headers['x-identity-header'] !== secret) {
      res.writeHead(401).end();
      return;
    }
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ access_token: 'image-test', expires_on: String(Math.floor(Date.now() / 1000) + 3600), resource: 'https://management.azure.com/', token_type: 'Bearer' }));
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      resolve({ url: `http://127.0.0.1:${port}/msi/token`, requests, close: () => server.close() });
    }),
  );
}

/**
 * Runs the unpacked image's process as a container runtime would, without one: a private
 * mount namespace in which the rootfs is bind-mounted read-only (the chart's
 * readOnlyRootFilesystem), /tmp is a tmpfs (the chart's emptyDir), the ServiceAccount token
 * is mounted where the kubelet puts it, then chroot + chdir + setuid/setgid to the image's
 * user and exec of the image's entrypoint. The network namespace is the host's (127.0.0.1).
 */
function runContainer(rootfs: string, mounts: Array<{ host: string; at: string }>, p: Bundle['process'], args: string[], env: Record<string, string>): ChildProcess {
  for (const m of mounts) mkdirSync(path.join(rootfs, m.at), { recursive: true });
  for (const d of ['null', 'zero', 'random', 'urandom']) writeFileSync(path.join(rootfs, 'dev', d), '');
  const script = [
    'set -e',
    'R="$1"; shift',
    'mount --bind "$R" "$R"',
    'mount -t tmpfs -o mode=1777,size=64m tmpfs "$R/tmp"',
    'mount -t proc proc "$R/proc"',
    'for d in null zero random urandom; do mount --bind "/dev/$d" "$R/dev/$d"; done',
    ...mounts.map((m) => `mount --bind -o ro ${JSON.stringify(m.host)} "$R"${JSON.stringify(m.at)}`),
    'mount -o remount,bind,ro "$R"',
    `exec unshare --root="$R" --wd=${JSON.stringify(p.cwd)} --setgid=${p.user.gid} --setuid=${p.user.uid} -- "$@"`,
  ].join('\n');
  const imageEnv = Object.fromEntries(p.env.map((e) => [e.slice(0, e.indexOf('=')), e.slice(e.indexOf('=') + 1)]));
  return spawn('unshare', ['--mount', '--propagation', 'private', '--fork', '--kill-child=SIGTERM', 'sh', '-c', script, 'sh', rootfs, ...args], {
    env: { ...imageEnv, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

describe('the OCI image, built by scripts/build-image.mjs, runs as the controller', () => {
  let image: BuiltImage;
  let work: string;
  let rootfs: string;
  let container: ChildProcess | undefined;
  let serveArm: ChildProcess | undefined;
  let identity: Awaited<ReturnType<typeof startIdentityEndpoint>> | undefined;
  let arm: { endpoint: string; caCertPath: string; subscriptionId: string };
  let deployment: Container;
  let metricsPort: number;
  let output = '';
  let uid = -1;

  beforeAll(async () => {
    // Cached when `.ci/run` (npm run image) built these inputs already; otherwise built here.
    image = await buildImage();
    work = mkdtempSync(path.join(tmpdir(), 'azflex-image-test-'));
    mkdirSync(path.join(work, 'layout'));
    const untar = await run('tar', ['-C', path.join(work, 'layout'), '-xf', image.archive]);
    expect(untar.code, untar.stderr).toBe(0);
    const unpack = await run('umoci', ['unpack', '--image', `${path.join(work, 'layout')}:${image.tag}`, path.join(work, 'bundle')]);
    expect(unpack.code, unpack.stderr).toBe(0);
    rootfs = path.join(work, 'bundle', 'rootfs');

    // The chart's ServiceAccount and RBAC, as `helm install` would create them; credentials
    // from a managed identity (the endpoint below), so DefaultAzureCredential is narrowed to it.
    await ensureNamespace(info, ns);
    const objects = await renderChart(info, release, ns, ['--set', 'azure.credentials=managedIdentity', '--set', `nodeAgent.sha256.amd64=${'0'.repeat(64)}`]);
    const rbac = objects.filter((o) => ['ServiceAccount', 'ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding'].includes(o.kind));
    const applied = await kubectl(info, ['apply', '-f', '-'], rbac.map((o) => `---\n${stringify(o)}`).join(''));
    expect(applied.code, applied.stderr).toBe(0);
    const dep = objects.find((o): o is K8sObject & { spec: { template: { spec: { serviceAccountName: string; containers: Container[] } } } } => o.kind === 'Deployment');
    if (!dep) throw new Error('the chart renders no Deployment');
    deployment = dep.spec.template.spec.containers[0] as Container;
    await adminRequest(info, 'POST', `/api/v1/namespaces/${ns}/secrets`, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'azflex-bootstrap-token' },
      stringData: { token: 'abcdef.0123456789abcdef' },
    }).catch((e: { code?: number }) => {
      if (e.code !== 409) throw e;
    });

    // What the kubelet projects into the pod: token (TokenRequest for the chart's SA), CA, namespace.
    const sa = path.join(work, 'serviceaccount');
    mkdirSync(sa);
    writeFileSync(path.join(sa, 'token'), await mintServiceAccountToken(info, ns, dep.spec.template.spec.serviceAccountName));
    writeFileSync(path.join(sa, 'ca.crt'), Buffer.from(info.caData, 'base64'));
    writeFileSync(path.join(sa, 'namespace'), ns);

    // `azflex sim serve-arm` with VM creates that take seconds rather than ARM's minutes.
    const scenario = path.join(work, 'arm.json');
    const cfg = defaultFakeArmConfig();
    writeFileSync(scenario, JSON.stringify({ ...cfg, latencyMs: { ...cfg.latencyMs, vmCreate: { min: 1000, max: 2000 } } }));
    serveArm = spawn(process.execPath, [path.join(repo, 'bin/azflex.mjs'), 'sim', 'serve-arm', '--scenario', scenario], { stdio: ['ignore', 'pipe', 'inherit'] });
    arm = await new Promise((resolve, reject) => {
      let line = '';
      serveArm?.stdout?.on('data', (c: Buffer) => {
        line += c.toString();
        if (line.includes('\n')) resolve(JSON.parse(line.slice(0, line.indexOf('\n'))));
      });
      serveArm?.on('exit', (code) => reject(new Error(`serve-arm exited ${code}`)));
    });
    const simCa = path.join(work, 'sim-ca');
    mkdirSync(simCa);
    writeFileSync(path.join(simCa, 'ca.crt'), readFileSync(arm.caCertPath));
    identity = await startIdentityEndpoint('image-test-secret');

    const api = new URL(info.server);
    const env: Record<string, string> = {
      HOSTNAME: podName,
      KUBERNETES_SERVICE_HOST: api.hostname,
      KUBERNETES_SERVICE_PORT: api.port,
      IDENTITY_ENDPOINT: identity.url,
      IDENTITY_HEADER: 'image-test-secret',
    };
    for (const e of deployment.env) {
      const field = e.valueFrom?.fieldRef?.fieldPath;
      if (e.value !== undefined) env[e.name] = e.value;
      else if (field === 'metadata.name') env[e.name] = podName;
      else if (field === 'metadata.namespace') env[e.name] = ns;
      else throw new Error(`env ${e.name}: the test does not resolve ${JSON.stringify(e.valueFrom)}`);
    }
    metricsPort = await freePort();
    const bundle = JSON.parse(readFileSync(path.join(work, 'bundle', 'config.json'), 'utf8')) as Bundle;
    // The pod's args replace the image's CMD; the entrypoint stays. Then the simulator's ARM,
    // and a free metrics port (8080 may be taken on a shared machine).
    const entrypoint = bundle.process.args.slice(0, bundle.process.args.length - 1);
    expect(bundle.process.args.at(-1)).toBe('controller');
    const args = [...entrypoint, ...deployment.args, `--arm-endpoint=${arm.endpoint}`, `--arm-ca-file=${SIM_CA_DIR}/ca.crt`, `--metrics-port=${metricsPort}`];
    container = runContainer(rootfs, [{ host: sa, at: SA_DIR }, { host: simCa, at: SIM_CA_DIR }], bundle.process, args, env);
    container.stdout?.on('data', (c: Buffer) => (output += c.toString()));
    container.stderr?.on('data', (c: Buffer) => (output += c.toString()));
    uid = bundle.process.user.uid;
  });

  afterAll(async () => {
    if (container && container.exitCode === null) {
      // SIGTERM to the controller itself (as the kubelet does); the namespace's parent exits with it.
      const node = (await run('ps', ['-o', 'pid=', '--ppid', String(container.pid)])).stdout.trim();
      if (node) process.kill(Number(node), 'SIGTERM');
      else container.kill('SIGTERM');
      await new Promise((r) => container?.once('exit', r));
    }
    serveArm?.kill('SIGTERM');
    identity?.close();
    const claims = ((await adminRequest(info, 'GET', NC)) as { items: RawNodeClaim[] }).items.filter((c) => c.spec.nodeClassRef.name === 'image-h200');
    for (const c of claims) await forceDelete(info, `${NC}/${c.metadata.name}`);
    await forceDelete(info, '/apis/karpenter.sh/v1/nodepools/image-h200');
    await forceDelete(info, `${AFNC}/image-h200`);
    // The mount namespace ended with its processes; nothing of the bundle is mounted any more.
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('is non-root, without shell, npm or compiler, and runs under the chart’s read-only root filesystem', async () => {
    const bundle = JSON.parse(readFileSync(path.join(work, 'bundle', 'config.json'), 'utf8')) as Bundle;
    expect(bundle.process.user).toEqual({ uid: 65532, gid: 65532 });
    expect(deployment.securityContext).toMatchObject({ readOnlyRootFilesystem: true, runAsNonRoot: true });
    // Outside /app the only executables are Node and shared libraries: no shell, apt, dpkg or compiler.
    const exe = await run('find', [rootfs, '-path', path.join(rootfs, 'app'), '-prune', '-o', '-type', 'f', '-perm', '/111', '-not', '-name', '*.so*', '-print']);
    expect(exe.stdout.split('\n').filter(Boolean).map((p) => path.relative(rootfs, p))).toEqual(['usr/local/bin/node']);
    // The app is one bundle: no node_modules anywhere, the bundled packages' licenses beside it.
    const nodeModules = await run('find', [rootfs, '-name', 'node_modules']);
    expect(nodeModules.stdout.trim()).toBe('');
    expect(readdirSync(path.join(rootfs, 'app')).sort()).toEqual(['crds', 'dist', 'package.json']);
    // What bundle-app writes (its own test checks the files): the entry points, their chunks and maps.
    const cli = readdirSync(path.join(rootfs, 'app/dist/cli'));
    expect(cli).toEqual(expect.arrayContaining(['client.js', 'main.js', 'main.js.map', 'worker-loop.js', 'worker-loop.js.map']));
    expect(cli.filter((f) => !/^(client|main|worker-loop)\.js(\.map)?$/.test(f) && !/^[a-z0-9-]+-[A-Z0-9]{8}\.js(\.map)?$/.test(f))).toEqual([]);
    const notices = readFileSync(path.join(rootfs, 'app/dist/THIRD-PARTY-NOTICES'), 'utf8');
    for (const pkg of ['@kubernetes/client-node', '@azure/arm-compute', 'xstate', 'pino']) expect(notices).toMatch(new RegExp(`^${pkg} \\d+\\.\\d+\\.\\d+ \\(`, 'm'));
    expect(image.layers.map((l) => l.name)).toEqual(['debian', 'node', 'app']);
  });

  it('wins the Lease under the chart’s ServiceAccount and launches a NodeClaim: a VM appears in the fake ARM', async () => {
    const lease = await eventually(
      'the container holds the Lease',
      async () => {
        if (container?.exitCode !== null) throw new Error(`the container exited (${container?.exitCode}):\n${output}`);
        const l = (await adminRequest(info, 'GET', `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases/azflex-controller`).catch(() => undefined)) as { spec?: { holderIdentity?: string } } | undefined;
        return l?.spec?.holderIdentity === podName ? l : undefined;
      },
      60_000,
      250,
    );
    expect(lease.spec?.holderIdentity).toBe(podName);
    // The process is the image's user, not root.
    const pid = container?.pid;
    const ps = await run('ps', ['-o', 'uid=,args=', '--ppid', String(pid)]);
    expect(ps.stdout.trim().split(/\s+/).slice(0, 4)).toEqual([String(uid), '/usr/local/bin/node', '/app/dist/cli/main.js', 'controller']);

    await createH200Pool(info, 'image-h200', { subscriptionID: arm.subscriptionId, resourceGroup: DEFAULT_RESOURCE_GROUP, subnetID: DEFAULT_SUBNET_ID, gpu: 'image-h200' });
    await createUnschedulableGpuPod(info, ns, 'trainer', 'image-h200');

    const claim = await eventually(
      'a Launched NodeClaim with a providerID',
      async () => {
        if (container?.exitCode !== null) throw new Error(`the container exited (${container?.exitCode}):\n${output}`);
        const items = ((await adminRequest(info, 'GET', NC)) as { items: RawNodeClaim[] }).items;
        const c = items.find((x) => x.spec.nodeClassRef.name === 'image-h200');
        return c?.status?.providerID && c.status.conditions?.some((x) => x.type === 'Launched' && x.status === 'True') ? c : undefined;
      },
      90_000,
      500,
    ).catch((e: unknown) => {
      throw new Error(`${e instanceof Error ? e.message : String(e)}\ncontainer output:\n${output.slice(-6000)}`);
    });
    const vms = await armGet(arm.endpoint, readFileSync(arm.caCertPath), `/subscriptions/${arm.subscriptionId}/providers/Microsoft.Compute/virtualMachines?api-version=2024-07-01`);
    const vmName = /\/virtualmachines\/([^/]+)$/i.exec(claim.status?.providerID ?? '')?.[1];
    expect(vms.value.map((v) => v.name.toLowerCase())).toContain(vmName?.toLowerCase());
    // Its ARM token came from the managed identity endpoint through DefaultAzureCredential.
    expect(identity?.requests.some((u) => u.includes('resource=https%3A%2F%2Fmanagement.azure.com'))).toBe(true);
    const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    expect(metrics).toMatch(/^azflex_leader 1$/m);
  });
});
