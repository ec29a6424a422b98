import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { X509Certificate } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { generate } from 'selfsigned';
import { KubeClient, tokenKubeConfig } from '../../src/k8s/client.js';
import { metricsSecurity } from '../../src/metrics/tls.js';
import { KubeMetricsAuthorizer } from '../../src/metrics/auth.js';
import { VirtualClock } from '../../src/sim/virtual-clock.js';

const client = new KubeClient(tokenKubeConfig('https://127.0.0.1:1', '', 'unused'));

describe('secure metrics certificate', () => {
  it('reads tls.crt and tls.key from the cert dir (a mounted kubernetes.io/tls Secret)', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'azflex-metrics-tls-'));
    const pems = await generate([{ name: 'commonName', value: 'mounted' }], { keyType: 'ec', curve: 'P-256', algorithm: 'sha256' });
    writeFileSync(path.join(dir, 'tls.crt'), pems.cert);
    writeFileSync(path.join(dir, 'tls.key'), pems.private);
    const s = await metricsSecurity(dir, client, new VirtualClock(0));
    expect(String(s.cert)).toBe(pems.cert);
    expect(String(s.key)).toBe(pems.private);
    expect(s.authorizer).toBeInstanceOf(KubeMetricsAuthorizer);
  });

  it('makes a self-signed pair at start without a cert dir, as controller-runtime does', async () => {
    const s = await metricsSecurity(undefined, client, new VirtualClock(0));
    const cert = new X509Certificate(String(s.cert));
    expect(cert.subject).toContain('CN=azflex-metrics');
    expect(cert.checkPrivateKey((await import('node:crypto')).createPrivateKey(String(s.key)))).toBe(true);
  });
});
