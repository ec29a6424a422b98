import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * App Service's managed-identity endpoint (IDENTITY_ENDPOINT + IDENTITY_HEADER), which
 * DefaultAzureCredential reads: an ARM token for the fake ARM without Entra ID, for the
 * `azflex controller` processes the Kubernetes tests and `npm run bench:scale` start.
 */
export function managedIdentityEndpoint(secret: string): Promise<{ url: string; close: () => void }> {
  const server = http.createServer((req, res) => {
    if (req.headers['x-identity-header'] !== secret) return void res.writeHead(401).end();
    res.setHeader('content-type', 'application/json');
    // Wall time is right here: the token's expiry is read by the real SDK on the real clock.
    res.end(JSON.stringify({ access_token: secret, expires_on: String(Math.floor(Date.now() / 1000) + 24 * 3600), resource: 'https://management.azure.com/', token_type: 'Bearer' }));
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/msi/token`, close: () => server.close() })));
}
