import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// Fault tests (`npm run test:faults`): the observatory as separate processes on throwaway
// Postgres and Redis servers that the tests crash and restart. One file at a time: each file
// runs half a dozen processes and times lock expiries, which a busy 2-core machine would skew.
export default defineConfig({
  test: {
    root: fileURLToPath(new URL('../..', import.meta.url)),
    include: ['test/faults/**/*.fault.ts'],
    testTimeout: 60_000,
    hookTimeout: 90_000,
    pool: 'forks',
    fileParallelism: false,
    reporters: ['default'],
  },
});
