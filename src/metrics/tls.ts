import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { generate } from 'selfsigned';
import type { KubeClient } from '../k8s/client.js';
import type { Clock } from '../ports/clock.js';
import { KubeMetricsAuthorizer } from './auth.js';
import type { MetricsSecurity } from './server.js';

/**
 * The secure metrics endpoint's certificate: tls.crt and tls.key from certDir (a mounted
 * kubernetes.io/tls Secret, e.g. from cert-manager), or, as controller-runtime does without a
 * CertDir, a self-signed pair made in memory at start (scrapers then skip verification or pin it).
 */
export async function metricsSecurity(certDir: string | undefined, client: KubeClient, clock: Clock): Promise<MetricsSecurity> {
  const authorizer = new KubeMetricsAuthorizer(client, clock);
  if (certDir) return { cert: readFileSync(path.join(certDir, 'tls.crt')), key: readFileSync(path.join(certDir, 'tls.key')), authorizer };
  const pems = await generate([{ name: 'commonName', value: 'azflex-metrics' }], { keyType: 'ec', curve: 'P-256', algorithm: 'sha256' });
  return { cert: pems.cert, key: pems.private, authorizer };
}
