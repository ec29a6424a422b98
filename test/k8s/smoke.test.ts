import { describe, expect, inject, it } from 'vitest';
import { adminRequest } from './harness.js';

describe('control plane', () => {
  it('serves the version it was built as', async () => {
    const info = inject('k8s');
    const v = (await adminRequest(info, 'GET', '/version')) as { gitVersion: string };
    expect(v.gitVersion).toMatch(/^v1\.3[34]\./);
  });
});
