import { readFileSync } from 'node:fs';
import { request } from 'node:https';
import { afterEach } from 'vitest';
import type { AccessToken, TokenCredential } from '@azure/core-auth';
import { serveArm, type ServedArm } from '../../../src/sim/arm/https-face.js';
import type { FakeArmConfig } from '../../../src/sim/arm/types.js';
import { runOnClock } from '../../azure/helpers/canned-arm.js';

/** The api-versions the tests speak (those of the SDKs in package.json). */
export const NET = '2026-01-01';
export const CMP = '2026-04-01';
export const credential: TokenCredential = { getToken: async (): Promise<AccessToken> => ({ token: 't', expiresOnTimestamp: Date.now() + 3_600_000 }) };

export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: { [key: string]: unknown } & { error?: { code: string; message: string; target?: string; details?: Array<{ code: string; target?: string; message: string }> } };
}

/**
 * The ARM face served over HTTPS on a manual clock, closed after each test, with a plain HTTPS
 * client (no SDK: the REST paths as documented; a string body is sent as it is, anything else
 * as JSON) and the face's clock helpers.
 */
export function faceServer(seed: number) {
  let served: ServedArm[] = [];
  afterEach(async () => {
    await Promise.all(served.map((s) => s.close()));
    served = [];
  });
  return async (cfg: FakeArmConfig) => {
    const s = await serveArm({ host: '127.0.0.1', scenarioConfig: cfg, seed, clockMode: 'manual', lroRetryAfterSeconds: 10 });
    served.push(s);
    const ca = readFileSync(s.caCertPath, 'utf8');
    const call = (method: string, pathOrUrl: string, body?: unknown, headers: Record<string, string> = {}): Promise<Reply> =>
      new Promise((resolve, reject) => {
        const url = pathOrUrl.startsWith('https://') ? pathOrUrl : `${s.endpoint}${pathOrUrl}`;
        const req = request(url, { method, ca, headers: { authorization: 'Bearer x', 'content-type': 'application/json', ...headers } }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json: text ? (JSON.parse(text) as Reply['json']) : {} });
          });
        });
        req.on('error', reject);
        req.end(body === undefined || typeof body === 'string' ? body : JSON.stringify(body));
      });
    const run = <T>(p: Promise<T>) => runOnClock(s.clock, p);
    const advance = (seconds: number) => s.clock.runUntil(s.clock.now() + seconds * 1000);
    return { s, ca, call, run, advance };
  };
}
