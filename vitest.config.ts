import { defineConfig } from 'vitest/config';

// One config for the whole workspace. Integration tests talk to the real Postgres and Redis
// on loopback; each test file makes its own database and queue prefix, so files run in parallel.
export default defineConfig({
  test: {
    include: [
      'test/**/*.test.ts',
      'packages/*/src/**/*.test.ts',
      'packages/*/test/**/*.test.ts',
      'apps/*/src/**/*.test.ts',
      'apps/*/test/**/*.test.ts',
    ],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 3,
    reporters: ['default'],
  },
});
