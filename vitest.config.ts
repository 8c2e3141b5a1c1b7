import { defineConfig } from 'vitest/config';

// Two projects: unit tests live beside their code and need no servers; integration,
// browser and conformance tests live in test/ and share the real servers that the
// global setup starts once per run (DESIGN.md: one Temporal server, forks pool).
export default defineConfig({
  test: {
    pool: 'forks',
    // The JSON report feeds the one-line summary .ci/run prints (test/summary.mjs).
    reporters: ['default', 'json'],
    outputFile: { json: 'test-output/vitest-results.json' },
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: [
            '{api,worker,workflows,automation,activities,expr,governance,audit,adapters,store,integrations,config,cli,identity,core,dashboards,agent,tunnels,registry,sql}/**/*.test.ts',
          ],
        },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/**/*.test.ts'],
          globalSetup: ['test/harness/global-setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
});
