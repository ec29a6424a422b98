import { describe, expect, inject, it } from 'vitest';
import { ensureKubeScore } from '../../scripts/kube-score.mjs';
import { run } from './harness.js';
import { renderChartYaml } from './chart-render.js';

const info = inject('k8s');

/**
 * kube-score's checks that the chart does not pass, each with why. kube-score runs in place of
 * kube-linter, whose Go module the module proxy refuses (docs/security.md, "Chart checks").
 */
const IGNORED_TESTS: Record<string, string> = {
  'container-image-pull-policy':
    'the image is pinned by release tag or digest: IfNotPresent starts a restarted replica from the node\'s copy, without a registry round-trip or outage',
};
const FLAGS: Record<string, string> = {
  '--ignore-container-cpu-limit': 'no CPU limit: CFS throttling would stall reconciles in bursts; the CPU request gives the controller its share',
};
/** Findings accepted as they are (matched on kube-score's message). */
const ACCEPTED: Record<string, string> = {
  'The pod does not have a matching egress NetworkPolicy':
    'the controller reaches ARM, Entra ID and the API server by name; NetworkPolicy peers are IP blocks and selectors, so an egress policy would be allow-all',
};

/**
 * kube-score on the rendered chart as a hardened install renders it (the CI values with the
 * chart's NetworkPolicy on): no CRITICAL or WARNING finding beyond the short list above.
 */
describe('chart: kube-score', () => {
  it('finds nothing beyond the justified exclusions', async () => {
    const { binary } = await ensureKubeScore();
    const yaml = await renderChartYaml(info, 'azflex', 'azflex', ['--set', 'networkPolicy.enabled=true']);
    const args = ['score', '-o', 'ci', ...Object.keys(IGNORED_TESTS).flatMap((t) => ['--ignore-test', t]), ...Object.keys(FLAGS), '-'];
    const r = await run(binary, args, {}, yaml);
    const lines = r.stdout.split('\n').filter((l) => /^\[(CRITICAL|WARNING)\]/.test(l));
    const unexpected = lines.filter((l) => !Object.keys(ACCEPTED).some((m) => l.endsWith(m)));
    expect(unexpected, r.stdout + r.stderr).toEqual([]);
    // It scored the chart's workload: the Deployment's checks ran and passed.
    expect(r.stdout).toMatch(/^\[OK\] azflex\/azflex apps\/v1\/Deployment/m);
    // Each accepted finding is still one kube-score reports (or it leaves the list).
    for (const m of Object.keys(ACCEPTED)) expect(lines.some((l) => l.endsWith(m)), m).toBe(true);
  });
});
