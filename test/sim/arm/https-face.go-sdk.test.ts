import { execFile } from 'node:child_process';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ensureGoArmClient } from '../../../scripts/go-arm-client.mjs';
import { serveArm, type ServedArm } from '../../../src/sim/arm/https-face.js';
import type { FakeArmConfig } from '../../../src/sim/arm/types.js';
import { RG, SUB, SUBNET } from './helpers.js';

/**
 * The ARM face under the Go Azure SDK (azcore, armcompute, armnetwork: the client the upstream
 * provider is written with), a client azflex itself does not use. scripts/go-arm-client runs a
 * named flow over HTTPS and prints what the SDK reported (results, *azcore.ResponseError
 * ErrorCode/StatusCode) and every exchange it made; this file holds those to what real ARM
 * answers (docs/fidelity.md). The binary is built once through the Go module proxy into
 * ~/.cache/azflex (scripts/go-arm-client.mjs; minutes the first time); without Go this file
 * fails, as test/metrics/karpenter.test.ts does.
 *
 * The face runs on a manual clock, which the Go client moves through POST /_sim/clock/advance:
 * explicitly (the NIC reservation), and in ticks while the SDK waits out a Retry-After, so
 * minutes-long operations end in seconds. LROs carry Retry-After 1 here (ARM sends ~10; the
 * SDK sleeps it in wall time).
 */

interface GoError {
  responseError: boolean;
  errorCode?: string;
  statusCode?: number;
  bodyCode?: string;
  bodyMessage?: string;
  message: string;
}
interface GoStep {
  name: string;
  ok: boolean;
  result?: Record<string, unknown>;
  error?: GoError;
  simT: number;
  wallMs: number;
}
interface GoExchange {
  method: string;
  path: string;
  query?: string;
  status: number;
  headers?: Record<string, string>;
  atMs: number;
}
interface GoRun {
  flow: string;
  steps: GoStep[];
  http: GoExchange[];
  fatal?: string;
}

const H200 = 'Standard_ND96isr_H200_v5';

function config(over: Partial<FakeArmConfig> = {}): FakeArmConfig {
  return {
    // No H200 quota (GPU families start at 0): the VM PUT is refused; 8 D-series vCPUs for the VMs that succeed.
    regions: [{ subscriptionId: SUB, location: 'eastus2', familyQuotaCores: { standardDSv5Family: 8 }, regionalQuotaCores: 400 }],
    subnets: [{ id: SUBNET, addressPrefix: '10.1.0.0/24' }],
    listLagSeconds: { appearSeconds: 0, disappearSeconds: 0 },
    // Pages of 2, so three VMs and three NICs list on two pages each.
    listPageSize: 2,
    throttling: true,
    ...over,
  };
}

let binary = '';
beforeAll(async () => {
  binary = (await ensureGoArmClient()).binary;
});

let served: ServedArm[] = [];
afterEach(async () => {
  await Promise.all(served.map((s) => s.close()));
  served = [];
});

/** Serves the face and runs one flow of the Go client against it (asynchronously: the face answers from this process). */
async function runFlow(flow: string, cfg: FakeArmConfig = config(), lroRetryAfterSeconds = 1): Promise<GoRun> {
  const s = await serveArm({ host: '127.0.0.1', scenarioConfig: cfg, seed: 11, clockMode: 'manual', lroRetryAfterSeconds });
  served.push(s);
  const args = ['-endpoint', s.endpoint, '-ca', s.caCertPath, '-subscription', SUB, '-resource-group', RG, '-subnet', SUBNET, '-gpu-size', H200, '-flow', flow];
  const stdout = await new Promise<string>((resolve, reject) => {
    execFile(binary, args, { maxBuffer: 64 << 20, timeout: 110_000 }, (err, out, stderr) => {
      // Exit 1 with JSON on stdout is a flow that stopped early: its `fatal` fails the test below.
      if (err && !out) reject(new Error(`go-arm-client ${flow}: ${err.message}\n${stderr}`));
      else resolve(out);
    });
  });
  const run = JSON.parse(stdout) as GoRun;
  expect(run.fatal, `flow ${flow} stopped`).toBeUndefined();
  return run;
}

const step = (run: GoRun, name: string): GoStep => {
  const s = run.steps.find((x) => x.name === name);
  if (!s) throw new Error(`no step ${name} in ${run.steps.map((x) => x.name).join(', ')}`);
  return s;
};
const exchanges = (run: GoRun, method: string, pathPart: string | RegExp) =>
  run.http.filter((h) => h.method === method && (typeof pathPart === 'string' ? h.path.includes(pathPart) : pathPart.test(h.path)));

describe('ARM face × Go Azure SDK (azcore, armcompute, armnetwork)', () => {
  it('NIC create, a VM create refused for quota, then the NIC refused to deletes for 180 s of the face clock', async () => {
    // A 5 s Retry-After on the face's other operations, so "no sleep before the GET" stays
    // measurable on a loaded machine.
    const run = await runFlow('reservation', config(), 5);
    const nic = step(run, 'nic-create res-nic');
    expect(nic.result).toMatchObject({ name: 'res-nic', provisioningState: 'Succeeded', privateIp: expect.stringMatching(/^10\.1\.0\.\d+$/) });
    // The NIC PUT answers 201 with Azure-AsyncOperation and the NIC already Succeeded, and, as
    // Network does then, no Retry-After: the SDK's poller is done and GETs the NIC at once.
    const [put] = exchanges(run, 'PUT', '/networkInterfaces/res-nic');
    expect(put).toMatchObject({ status: 201, headers: { 'azure-asyncoperation': expect.stringContaining('/providers/Microsoft.Network/locations/eastus2/operations/'), 'azure-asyncnotification': 'Enabled' } });
    expect(put?.headers).not.toHaveProperty('retry-after');
    const nicGet = run.http.find((h) => h.method === 'GET' && h.path.endsWith('/networkInterfaces/res-nic'))!;
    expect(nicGet.atMs - put!.atMs).toBeLessThan(4_000);

    // The quota refusal is an *azcore.ResponseError as ARM gives it: 409 OperationNotAllowed, at the PUT.
    const refused = step(run, 'vm-create-over-quota');
    expect(refused.error).toMatchObject({ responseError: true, statusCode: 409, errorCode: 'OperationNotAllowed', bodyCode: 'OperationNotAllowed' });
    expect(refused.error?.bodyMessage).toMatch(/exceeding approved standardNDSH200v5Family Cores quota.*Current Limit: 0/);
    expect(step(run, 'vm-get-after-refusal').error).toMatchObject({ statusCode: 404, errorCode: 'ResourceNotFound' });

    // The NIC is reserved for the refused VM: 400 NicReservedForAnotherVm until 180 s after the PUT.
    const putAt = refused.simT;
    for (const [name, after] of [['nic-delete-at-0s', 0], ['nic-delete-at-170s', 170], ['nic-delete-at-179s', 179]] as const) {
      const d = step(run, name);
      expect(d.simT - putAt, name).toBe(after * 1000);
      expect(d.error, name).toMatchObject({ responseError: true, statusCode: 400, errorCode: 'NicReservedForAnotherVm' });
      expect(d.error?.bodyMessage, name).toMatch(/reserved for another Virtual Machine for 180 seconds.*Reserved VM: .*\/virtualMachines\/res-vm$/);
    }
    const freed = step(run, 'nic-delete-at-180s');
    expect(freed).toMatchObject({ ok: true, result: { doneAtOnce: false } });
    const del = exchanges(run, 'DELETE', '/networkInterfaces/res-nic').at(-1)!;
    expect(del.status).toBe(202);
    expect(del.headers).toMatchObject({ 'azure-asyncoperation': expect.any(String), location: expect.stringContaining('/operationResults/') });
    expect(step(run, 'nic-get-after-delete').error).toMatchObject({ statusCode: 404, errorCode: 'ResourceNotFound' });
  });

  it('a VM create through the LRO, Get, Get with instanceView, list pagers across nextLink pages, VM, disk and NIC deletes', async () => {
    const run = await runFlow('lifecycle');
    for (const n of ['life-a', 'life-b', 'life-c']) {
      expect(step(run, `vm-create ${n}`).result).toMatchObject({ name: n, provisioningState: 'Succeeded', vmSize: 'Standard_D2s_v5', osDisk: `${n}_OsDisk_1` });
    }
    // As the Go SDK polls: 201 with Azure-AsyncOperation and Location (the Compute spec declares
    // both), the operation until Succeeded, each wait the Retry-After it was given, then the final
    // GET of the VM (at its own URL or through Location, which leads to it once the create is done).
    const vmUrl = '/virtualMachines/life-b';
    const putB = exchanges(run, 'PUT', vmUrl)[0]!;
    expect(putB.status).toBe(201);
    expect(putB.headers?.['azure-asyncoperation']).toMatch(/\/providers\/Microsoft\.Compute\/locations\/eastus2\/operations\/[^/?]+\?api-version=/);
    expect(putB.headers?.['location']).toMatch(/\/providers\/Microsoft\.Compute\/locations\/eastus2\/operations\/[^/?]+\?monitor=true&api-version=/);
    const opPath = new URL(putB.headers!['azure-asyncoperation']!).pathname;
    const polls = run.http.filter((h) => h.method === 'GET' && h.path === opPath);
    expect(polls.length).toBeGreaterThanOrEqual(1);
    for (const [i, p] of polls.entries()) {
      const before = i === 0 ? putB : polls[i - 1]!;
      expect(p.atMs - before.atMs).toBeGreaterThanOrEqual(Number(before.headers?.['retry-after'] ?? '0') * 1000 - 50);
    }
    const monitorPath = new URL(putB.headers!['location']!).pathname;
    const finalGet = run.http.find((h) => h.method === 'GET' && (h.path.endsWith(vmUrl) || (h.path === monitorPath && h.status === 200)) && h.atMs >= polls.at(-1)!.atMs);
    expect(finalGet?.status).toBe(200);

    // life-c was finished from its poller's resume token alone: polled to the end, its PUT sent once.
    expect(step(run, 'vm-create life-c').result).toMatchObject({ resumed: true, provisioningState: 'Succeeded' });
    expect(exchanges(run, 'PUT', '/virtualMachines/life-c')).toHaveLength(1);

    expect(step(run, 'vm-get').result).toMatchObject({ name: 'life-a', provisioningState: 'Succeeded' });
    expect(step(run, 'vm-get').result).not.toHaveProperty('statuses');
    expect(step(run, 'vm-get-instance-view').result).toMatchObject({ statuses: ['ProvisioningState/succeeded', 'PowerState/running'] });
    expect(step(run, 'vm-list-pager').result).toEqual({ pages: 2, names: ['life-a', 'life-b', 'life-c'] });
    expect(step(run, 'nic-list-pager').result).toEqual({ pages: 2, names: ['life-a-nic', 'life-b-nic', 'life-c-nic'] });
    expect(exchanges(run, 'GET', /\/virtualMachines$/).map((h) => h.query)).toEqual([expect.not.stringContaining('skiptoken'), expect.stringContaining('%24skiptoken=')]);

    for (const n of ['life-a', 'life-b', 'life-c']) {
      expect(step(run, `vm-delete ${n}`), n).toMatchObject({ ok: true, result: { doneAtOnce: false } });
      const d = exchanges(run, 'DELETE', `/virtualMachines/${n}`)[0]!;
      expect(d.status).toBe(202);
      expect(d.headers).toMatchObject({ 'azure-asyncoperation': expect.any(String), location: expect.stringContaining('monitor=true') });
    }
    // deleteOption Detach (Azure's default): the OS disk outlives its VM, unattached, until deleted.
    expect(step(run, 'disk-get').result).toEqual({ name: 'life-a_OsDisk_1', diskState: 'Unattached' });
    for (const n of ['life-a', 'life-b', 'life-c']) {
      expect(step(run, `disk-delete ${n}`).ok, n).toBe(true);
      expect(step(run, `nic-delete ${n}`).ok, n).toBe(true);
    }
    expect(step(run, 'disk-get-after-delete').error).toMatchObject({ statusCode: 404, errorCode: 'ResourceNotFound' });
    // Every ARM answer the SDK got says what is left of the subscription's bucket for its kind of request.
    for (const h of run.http) {
      const kind = h.method === 'GET' ? 'reads' : h.method === 'DELETE' ? 'deletes' : 'writes';
      expect(h.headers?.[`x-ms-ratelimit-remaining-subscription-${kind}`], `${h.method} ${h.path}`).toMatch(/^\d+$/);
      // …and of the subscription's global bucket, 15 times one principal's.
      expect(Number(h.headers?.[`x-ms-ratelimit-remaining-subscription-global-${kind}`]), `${h.method} ${h.path}`).toBeGreaterThan(Number(h.headers?.[`x-ms-ratelimit-remaining-subscription-${kind}`]));
    }
  });

  it('a VM create that fails in allocation: the poller\'s ResponseError carries the operation\'s code; the Failed VM holds its NIC until deleted', async () => {
    const run = await runFlow('allocation-failure', config({ regions: [{ subscriptionId: SUB, location: 'eastus2', familyQuotaCores: { standardDSv5Family: 8 }, regionalQuotaCores: 400, allocationFailureRate: 1 }] }));
    // The PUT was accepted (201); the failure comes from polling: the operation's 200 with status Failed and its error.
    expect(exchanges(run, 'PUT', '/virtualMachines/af-vm').map((h) => h.status)).toEqual([201]);
    const failed = step(run, 'vm-create-allocation-failed');
    expect(failed.error).toMatchObject({ responseError: true, statusCode: 200, errorCode: 'AllocationFailed', bodyCode: 'AllocationFailed' });
    expect(failed.error?.bodyMessage).toMatch(/^Allocation failed\. We do not have sufficient capacity for the requested VM size in this region\./);
    expect(step(run, 'vm-get-failed').result).toMatchObject({ provisioningState: 'Failed', statuses: ['ProvisioningState/failed/AllocationFailed'] });
    expect(step(run, 'nic-delete-attached').error).toMatchObject({ responseError: true, statusCode: 400, errorCode: 'NicInUse' });
    expect(step(run, 'vm-delete-failed').ok).toBe(true);
    expect(step(run, 'nic-delete-after-vm').ok).toBe(true);
  });

  it('what a provider reads first: Resource SKUs (api-version 2021-07-01, location filter), quota usages and VM sizes through the SDK\'s pagers', async () => {
    const run = await runFlow('catalog');
    const skus = step(run, 'resource-skus').result as { count: number; vms: Record<string, { family: string; vCPUs: string; gpus: string; zones: string[]; restrictions: string[]; locations: number }> };
    expect(skus.vms[H200]).toEqual({ family: 'standardNDSH200v5Family', vCPUs: '96', gpus: '8', memoryGB: expect.any(String), zones: ['1', '2', '3'], restrictions: [], locations: 1 });
    expect(Object.keys(skus.vms).length).toBeGreaterThan(20);
    expect(exchanges(run, 'GET', /\/providers\/Microsoft\.Compute\/skus$/).map((h) => [h.status, h.query])).toEqual([[200, "%24filter=location%20eq%20%27eastus2%27&api-version=2021-07-01"]]);
    const usages = step(run, 'usages').result as Record<string, { current: number; limit: number; localized: string }>;
    expect(usages['cores']).toMatchObject({ current: 0, limit: 400, localized: 'Total Regional vCPUs' });
    // GPU families start at 0 until a quota request raises them: the same limit the VM PUT's refusal quotes.
    expect(usages['standardNDSH200v5Family']).toMatchObject({ current: 0, limit: 0 });
    expect(usages['standardDSv5Family']).toMatchObject({ limit: 8 });
    const sizes = (step(run, 'vm-sizes').result as { names: string[] }).names;
    expect(sizes.sort()).toEqual(Object.keys(skus.vms).sort());
  });

  it('deletes of absent resources: 204, which the SDK\'s Begin*Delete takes as done; reads 404 ResourceNotFound; a missing group 404 ResourceGroupNotFound', async () => {
    const run = await runFlow('absent');
    for (const [name, path] of [['vm-delete-absent', `${RG}/providers/Microsoft.Compute/virtualMachines/never-vm`], ['nic-delete-absent', `${RG}/providers/Microsoft.Network/networkInterfaces/never-nic`], ['disk-delete-absent', `${RG}/providers/Microsoft.Compute/disks/never-disk`]] as const) {
      // The generated clients accept 200/202/204 on DELETE; 204 gives a poller that is done at once.
      expect(step(run, name), name).toMatchObject({ ok: true, result: { doneAtOnce: true } });
      const [answer] = exchanges(run, 'DELETE', path);
      expect(answer?.status, name).toBe(204);
      // ARM answers it itself: its delete bucket is charged, no resource provider's policy.
      expect(answer?.headers?.['x-ms-ratelimit-remaining-subscription-deletes'], name).toMatch(/^\d+$/);
      expect(answer?.headers, name).not.toHaveProperty('x-ms-ratelimit-remaining-resource');
    }
    for (const name of ['vm-get-absent', 'nic-get-absent', 'disk-get-absent']) {
      expect(step(run, name).error, name).toMatchObject({ responseError: true, statusCode: 404, errorCode: 'ResourceNotFound' });
    }
    for (const name of ['vm-delete-in-absent-group', 'nic-delete-in-absent-group']) {
      expect(step(run, name).error, name).toMatchObject({ responseError: true, statusCode: 404, errorCode: 'ResourceGroupNotFound', bodyMessage: "Resource group 'no-such-group' could not be found." });
    }
  });

  it('error bodies: 400, 404, 409 and 429 parse into ResponseError; ARM\'s 429 is retried after Retry-After, Compute\'s 20-minute one is not', async () => {
    const run = await runFlow('errors');
    expect(step(run, '400 nic-put-without-location').error).toMatchObject({ responseError: true, statusCode: 400, errorCode: 'LocationRequired', bodyMessage: 'The location property is required for this definition.' });
    expect(step(run, '404 vm-get-absent').error).toMatchObject({ responseError: true, statusCode: 404, errorCode: 'ResourceNotFound' });
    expect(step(run, '409 vm-create-over-quota').error).toMatchObject({ responseError: true, statusCode: 409, errorCode: 'OperationNotAllowed' });

    // ARM's write bucket drained, the clock stopped: the SDK's retry policy (3 retries) waits each Retry-After, then reports the 429.
    const throttled = step(run, '429 nic-put-throttled');
    expect(throttled.error).toMatchObject({ responseError: true, statusCode: 429, errorCode: 'SubscriptionRequestsThrottled' });
    expect(throttled.error?.bodyMessage).toMatch(/^Number of 'write' requests for subscription '.+' exceeded\. Please try again after '1' seconds/);
    const tries = exchanges(run, 'PUT', '/networkInterfaces/throttled-nic').filter((h) => h.status === 429);
    expect(tries.length).toBeGreaterThanOrEqual(4);
    const first4 = tries.slice(0, 4);
    for (const t of first4) {
      expect(t.headers).toMatchObject({ 'retry-after': '1', 'x-ms-ratelimit-remaining-subscription-writes': '0', 'x-ms-ratelimit-remaining-subscription-global-writes': expect.stringMatching(/^[1-9]\d*$/) });
    }
    for (let i = 1; i < first4.length; i++) expect(first4[i]!.atMs - first4[i - 1]!.atMs).toBeGreaterThanOrEqual(950);
    // With the clock running, a retry after Retry-After finds a token.
    expect(step(run, 'nic-create throttled-nic').ok).toBe(true);

    // Compute's own policy: 429 OperationNotAllowed with a Retry-After beyond the SDK's MaxRetryDelay (60 s), so it is not retried.
    const compute = step(run, '429 vm-put-compute-throttled');
    expect(compute.error).toMatchObject({ responseError: true, statusCode: 429, errorCode: 'OperationNotAllowed' });
    const vmPuts = exchanges(run, 'PUT', '/virtualMachines/throttled-vm');
    expect(vmPuts).toHaveLength(1);
    expect(Number(vmPuts[0]!.headers?.['retry-after'])).toBeGreaterThan(60);
    expect(vmPuts[0]!.headers?.['x-ms-ratelimit-remaining-resource']).toMatch(/Microsoft\.Compute\/PutVM3Min;0/);
  });
});
