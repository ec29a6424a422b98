import { configDefaults, defineConfig } from 'vitest/config';

/**
 * Two projects share these options:
 *  - "unit": every test/**\/*.test.ts except test/k8s (pure, fast, parallel);
 *  - "k8s": test/k8s/**, against a real etcd + kube-apiserver started once by
 *    test/k8s/global-setup.ts (binaries via scripts/envtest.mjs; the first run may build them
 *    with Go, hence the long hookTimeout). Its files run one at a time: they share one API
 *    server and the machine has two cores.
 * A project's globalSetup runs only when that project has test files selected, so
 * `vitest run test/provisioning` never starts an API server.
 */
export default defineConfig({
  test: {
    testTimeout: 120_000,
    hookTimeout: 1_800_000,
    pool: 'forks',
    // fast-check's global seed, runs and replay path from AZFLEX_PROPERTY_* (docs/development.md, Tests).
    setupFiles: ['test/fast-check-setup.ts'],
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, 'test/k8s/**'],
        },
      },
      {
        extends: true,
        test: {
          name: 'k8s',
          include: ['test/k8s/**/*.test.ts'],
          globalSetup: ['test/k8s/global-setup.ts'],
          fileParallelism: false,
        },
      },
    ],
  },
});
