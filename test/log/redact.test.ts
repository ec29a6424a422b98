import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { REDACTED, SecretRegistry, createRedactingLogger, redact, redactString } from '../../src/log/redact.js';
import { renderCustomData, sealBootstrapConfig, type UserDataInput } from '../../src/azure/userdata/index.js';
import { AzureError } from '../../src/ports/azure.js';

const TOKEN = 'k8stok.abcdefghij012345';
const CA = Buffer.from('-----BEGIN CERTIFICATE-----\nMIIBfake\n-----END CERTIFICATE-----\n').toString('base64');
const input: UserDataInput = {
  bootstrap: { apiServerEndpoint: 'https://api.example.com:443', caCertData: CA, token: TOKEN, kubernetesVersion: '1.34.2' },
  region: 'eastus2',
  instanceType: 'Standard_ND96isr_H200_v5',
  nodePool: 'h200',
  nodeClass: 'h200',
  maxPods: 110,
  nvidiaRuntime: true,
  agent: { version: 'v0.0.18', sha256: { amd64: 'c'.repeat(64) } },
};
const KUBECONFIG = `apiVersion: v1
kind: Config
users:
- name: admin
  user:
    token: ${TOKEN}
    client-key-data: LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQ==
`;

function capture(): { lines: () => string; stream: Writable } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      chunks.push(chunk.toString());
      cb();
    },
  });
  return { lines: () => chunks.join(''), stream };
}

describe('redaction', () => {
  it('pino output never contains the bootstrap token, customData or kubeconfig credentials', () => {
    const out = capture();
    const log = createRedactingLogger({ level: 'trace' }, out.stream);
    const customData = renderCustomData(input);
    const vmSpec = { ref: { name: 'azflex-a' }, vmSize: 'Standard_ND96isr_H200_v5', customData, tags: { a: 'b' } };
    const restLike = Object.assign(new Error(`PUT failed for body ${JSON.stringify({ properties: { osProfile: { customData } } })}`), {
      name: 'RestError',
      statusCode: 400,
      request: { body: JSON.stringify({ osProfile: { customData } }), headers: { authorization: `Bearer ${TOKEN}` } },
    });

    log.info({ spec: vmSpec }, 'creating VM');
    log.info({ bootstrap: input.bootstrap }, 'bootstrap read');
    log.info({ bootstrap: sealBootstrapConfig(input.bootstrap) }, 'sealed bootstrap');
    log.warn({ kubeconfig: KUBECONFIG, note: `kubeconfig was ${KUBECONFIG}` }, 'kubeconfig');
    log.error({ err: restLike }, 'ARM refused');
    log.error(restLike);
    log.error(new AzureError('InvalidParameter', 400, `customData ${customData} rejected`));
    log.info(`joining with kubeadm join --token ${TOKEN} api.example.com`);
    log.info('printf style %s', `token=${TOKEN}`);
    log.info({ nested: { deeper: { userData: 'secret-user-data', list: [{ token: TOKEN }] } } }, 'nested');
    log.child({ customData }).info('child bindings');

    const text = out.lines();
    expect(text.split('\n').filter(Boolean)).toHaveLength(11);
    expect(text).not.toContain(TOKEN);
    expect(text).not.toContain(customData.slice(0, 40));
    expect(text).not.toContain('secret-user-data');
    expect(text).not.toContain('LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQ');
    expect(text).toContain(REDACTED);
    // The useful parts survive.
    expect(text).toContain('creating VM');
    expect(text).toContain('Standard_ND96isr_H200_v5');
    expect(text).toContain('"statusCode":400');
  });

  it('redact() censors secret keys, scrubs strings, survives cycles and keeps the rest', () => {
    const cyclic: Record<string, unknown> = { name: 'x', customData: 'H4sIAAAAsecret', password: 'hunter22' };
    cyclic.self = cyclic;
    const out = redact({ cyclic, message: `token: ${TOKEN}`, when: 3, ok: true, bearer: `Authorization: Bearer ${'a'.repeat(40)}` });
    expect(out).toEqual({
      cyclic: { name: 'x', customData: REDACTED, password: REDACTED, self: '[Circular]' },
      message: `token: ${REDACTED}`,
      when: 3,
      ok: true,
      bearer: `Authorization: Bearer ${REDACTED}`,
    });
  });

  it('exact secrets registered at runtime are scrubbed whatever their shape', () => {
    const registry = new SecretRegistry();
    registry.add('Opaque-Secret-Value-9');
    registry.add('short');
    expect(redactString('x Opaque-Secret-Value-9 y short', registry)).toBe(`x ${REDACTED} y short`);
  });

  it('errors keep their type, message and code but lose request bodies', () => {
    const err = Object.assign(new Error(`boom ${TOKEN}`), { code: 'E1', request: { body: 'customData=H4sI...' } });
    const out = redact(err) as unknown as Record<string, unknown>;
    expect(out).toMatchObject({ type: 'Error', message: `boom ${REDACTED}`, code: 'E1' });
    expect(out).not.toHaveProperty('request');
    expect(String(out.stack)).not.toContain(TOKEN);
  });

  it('JWT-shaped OAuth tokens, AZURE_CLIENT_SECRET assignments and keys ending in secret, password or token', () => {
    const jwt = `eyJ0eXAiOiJKV1QiLCJhbGciOiJSUzI1NiJ9.eyJhdWQiOiJodHRwczovL21hbmFnZW1lbnQuYXp1cmUuY29tIn0.${'s1Gn4tur3_-'.repeat(8)}`;
    const body = JSON.stringify({ token_type: 'Bearer', expires_in: 3599, access_token: jwt });
    const scrubbedBody = redactString(body);
    expect(scrubbedBody).not.toContain(jwt.slice(0, 30));
    expect(scrubbedBody).not.toContain('s1Gn4tur3');
    expect(scrubbedBody).toContain('"access_token":"[REDACTED]"');
    expect(scrubbedBody).toContain('"expires_in":3599');
    // A JWT alone, anywhere in free text.
    expect(redactString(`got ${jwt} from IMDS`)).toBe(`got ${REDACTED} from IMDS`);
    // An opaque (non-JWT) OAuth token as a form or JSON field.
    expect(redactString('refresh_token=0.AAAAopaque-value&client_id=x')).toBe(`refresh_token=${REDACTED}&client_id=x`);
    // Environment assignments, as a process dump or a .env file shows them; the name stays readable.
    const env = 'AZURE_CLIENT_ID=22222222-2222 AZURE_CLIENT_SECRET=Q~abc.def_ghi-123 AZURE_TENANT_ID=t';
    expect(redactString(env)).toBe(`AZURE_CLIENT_ID=22222222-2222 AZURE_CLIENT_SECRET=${REDACTED} AZURE_TENANT_ID=t`);
    expect(redactString('export AZURE_CLIENT_SECRET="Q~abc.def"')).toBe(`export AZURE_CLIENT_SECRET="${REDACTED}"`);
    expect(redactString('{"AZURE_CLIENT_SECRET":"Q~abc.def"}')).toBe(`{"AZURE_CLIENT_SECRET":"${REDACTED}"}`);
    // As an object key, in any case or separator style; neighbours survive.
    expect(redact({ env: { AZURE_CLIENT_SECRET: 'Q~abc.def', AZURE_CLIENT_ID: 'id', azureClientSecret: 'x1', DB_PASSWORD: 'p', session_token: 't', clientSecretName: 'azflex-sp' } })).toEqual({
      env: { AZURE_CLIENT_SECRET: REDACTED, AZURE_CLIENT_ID: 'id', azureClientSecret: REDACTED, DB_PASSWORD: REDACTED, session_token: REDACTED, clientSecretName: 'azflex-sp' },
    });
    // And through the logger.
    const out = capture();
    createRedactingLogger({ level: 'info' }, out.stream).info({ env: { AZURE_CLIENT_SECRET: 'Q~abc.def' }, body }, `token reply ${body}`);
    expect(out.lines()).not.toContain('Q~abc.def');
    expect(out.lines()).not.toContain(jwt.slice(40, 70));
  });
});
