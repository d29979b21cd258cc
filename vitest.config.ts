import { defineConfig } from 'vitest/config';

export default defineConfig({
  // Workspace packages resolve to their TypeScript sources in tests.
  resolve: { conditions: ['source'] },
  ssr: { resolve: { conditions: ['source'] } },
  test: {
    include: [
      'packages/*/src/**/*.test.{ts,tsx}',
      'apps/*/src/**/*.test.{ts,tsx}',
      'apps/app/e2e/**/*.test.ts',
      'tools/**/*.test.ts',
      'tests/*/src/**/*.test.ts',
    ],
    globalSetup: ['tools/test/global-setup.ts'],
    setupFiles: ['tools/test/stall-watch.ts'],
    reporters: ['default', './tools/test/summary-reporter.ts'],
    testTimeout: 60_000,
    hookTimeout: 180_000,
    pool: 'forks',
    // --no-node-snapshot: the bot sandbox (isolated-vm) needs it on Node 20+ (platform/node-flags.ts).
    poolOptions: { forks: { maxForks: 2, minForks: 1, execArgv: ['--no-node-snapshot'] } },
  },
});
