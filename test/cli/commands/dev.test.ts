import { describe, expect, it } from 'vitest';
import { devSummary } from '../../../src/cli/commands/dev.js';

describe('azflex dev summary', () => {
  it('says the fake ARM clock moves with its own in-process controller only (not a separate azflex controller)', () => {
    const lines = devSummary({ kubeconfigPath: 'k', armEndpoint: 'https://127.0.0.1:1', armCaCertPath: 'ca.pem', examplesDir: 'ex', metricsPort: 9, logsDir: 'logs' });
    const clock = lines.find((l) => l.includes("ARM's 180 s NIC reservation"))!;
    expect(clock).toContain("the fake ARM's clock and this in-process controller's move together");
    expect(lines).toContain("  curl --cacert ca.pem -X POST 'https://127.0.0.1:1/_sim/clock/advance?seconds=181'");
    expect(lines).toContain('metrics:      http://127.0.0.1:9/metrics (Karpenter\'s karpenter_* and azflex_*; /healthz, /readyz)');
  });
});
