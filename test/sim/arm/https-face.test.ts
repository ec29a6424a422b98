import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { request } from 'node:https';
import { createInterface } from 'node:readline';
import { afterEach, describe, expect, it } from 'vitest';
import { serveArm, type ServedArm } from '../../../src/sim/arm/https-face.js';
import { MAX_CLOCK_ADVANCE_SECONDS } from '../../../src/sim/arm/rest-sim.js';
import { defaultFakeArmConfig, DEFAULT_RESOURCE_GROUP, DEFAULT_SUBNET_ID, DEFAULT_SUBSCRIPTION_ID } from '../../../src/sim/arm/defaults.js';

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

function call(endpoint: string, ca: string, method: string, path: string, body?: unknown): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(`${endpoint}${path}`, { method, ca, headers: { authorization: 'Bearer anything', 'content-type': 'application/json' } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

let served: ServedArm | undefined;
afterEach(async () => {
  await served?.close();
  served = undefined;
});

const nicUrl = `/subscriptions/${DEFAULT_SUBSCRIPTION_ID}/resourceGroups/${DEFAULT_RESOURCE_GROUP}/providers/Microsoft.Network/networkInterfaces/nic-a?api-version=2026-01-01`;

describe('fake ARM over HTTPS', () => {
  it('serves the REST face with a fresh CA that a client trusts via `ca`; manual clock; close removes the CA dir', async () => {
    served = await serveArm({ host: '127.0.0.1', scenarioConfig: defaultFakeArmConfig(), seed: 1, clockMode: 'manual' });
    expect(served.endpoint).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    expect(served.subscriptionId).toBe(DEFAULT_SUBSCRIPTION_ID);
    const ca = readFileSync(served.caCertPath, 'utf8');
    expect(ca).toContain('BEGIN CERTIFICATE');

    const put = await call(served.endpoint, ca, 'PUT', nicUrl, {
      location: 'eastus2',
      properties: { ipConfigurations: [{ name: 'ipconfig1', properties: { subnet: { id: DEFAULT_SUBNET_ID } } }] },
    });
    expect(put.status).toBe(201);
    expect(JSON.parse(put.body)).toMatchObject({ properties: { ipConfigurations: [{ properties: { privateIPAddress: '10.1.0.4' } }] } });
    expect(String(put.headers['azure-asyncoperation'])).toMatch(new RegExp(`^${served.endpoint}/subscriptions/`));

    const before = served.clock.now();
    const adv = await call(served.endpoint, ca, 'POST', '/_sim/clock/advance?seconds=90');
    expect(JSON.parse(adv.body)).toMatchObject({ t: before + 90_000 });
    const state = JSON.parse((await call(served.endpoint, ca, 'GET', '/_sim/state')).body) as { nics: unknown[] };
    expect(state.nics).toHaveLength(1);

    // Without the CA the TLS handshake is refused.
    await expect(call(served.endpoint, '', 'GET', '/_sim/state')).rejects.toThrow(/certificate/i);

    const dir = served.caCertPath;
    await served.close();
    served = undefined;
    expect(existsSync(dir)).toBe(false);
  });

  it('refuses a clock advance past its bound (400, clock unchanged, later calls still answer) and a malformed percent-encoding (400, not 500)', async () => {
    served = await serveArm({ host: '127.0.0.1', scenarioConfig: defaultFakeArmConfig(), seed: 1, clockMode: 'manual' });
    const ca = readFileSync(served.caCertPath, 'utf8');
    const before = served.clock.now();
    for (const seconds of ['1e308', 'Infinity', String(MAX_CLOCK_ADVANCE_SECONDS + 1)]) {
      const adv = await call(served.endpoint, ca, 'POST', `/_sim/clock/advance?seconds=${seconds}`);
      expect(adv.status).toBe(400);
      expect(JSON.parse(adv.body)).toMatchObject({ error: { code: 'InvalidParameter' } });
    }
    expect(served.clock.now()).toBe(before);
    const max = await call(served.endpoint, ca, 'POST', `/_sim/clock/advance?seconds=${MAX_CLOCK_ADVANCE_SECONDS}`);
    expect(JSON.parse(max.body)).toMatchObject({ t: before + MAX_CLOCK_ADVANCE_SECONDS * 1000 });
    expect((await call(served.endpoint, ca, 'PUT', nicUrl, {
      location: 'eastus2',
      properties: { ipConfigurations: [{ name: 'ipconfig1', properties: { subnet: { id: DEFAULT_SUBNET_ID } } }] },
    })).status).toBe(201);

    for (const path of [nicUrl.replace('nic-a', 'nic-%zz'), nicUrl.replace('nic-a', 'nic-%E2%82'), '/_sim/st%ate']) {
      const bad = await call(served.endpoint, ca, 'GET', path);
      expect(bad.status).toBe(400);
      expect(JSON.parse(bad.body)).toMatchObject({ error: { code: 'BadRequest' } });
    }
  });

  it('realtime mode pumps virtual time with the wall clock', async () => {
    served = await serveArm({ host: '127.0.0.1', scenarioConfig: defaultFakeArmConfig(), seed: 1, clockMode: 'realtime' });
    const t0 = served.clock.now();
    await new Promise((r) => setTimeout(r, 300));
    expect(served.clock.now() - t0).toBeGreaterThanOrEqual(150);
  });

  it('`azflex sim serve-arm` prints exactly one JSON line when ready and stops on SIGTERM', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'sim', 'serve-arm', '--manual-clock', '--seed', '5'], {
      cwd: new URL('../../..', import.meta.url).pathname,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      const lines = createInterface({ input: child.stdout });
      const first = await new Promise<string>((resolve, reject) => {
        lines.once('line', resolve);
        child.once('exit', (code) => reject(new Error(`serve-arm exited early (${code})`)));
      });
      const ready = JSON.parse(first) as { endpoint: string; caCertPath: string; subscriptionId: string };
      expect(Object.keys(ready)).toEqual(['endpoint', 'caCertPath', 'subscriptionId']);
      const state = await call(ready.endpoint, readFileSync(ready.caCertPath, 'utf8'), 'GET', '/_sim/state');
      expect(state.status).toBe(200);
      const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      expect(existsSync(ready.caCertPath)).toBe(false);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  }, 60_000);
});
