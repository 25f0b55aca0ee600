import { defineConfig } from 'vitest/config';

/**
 * The slow projects, each runnable alone (`npx vitest run --project faults`): they start whole
 * stacks, private servers or a browser. `npm run test:fast` runs the rest; `npm test` runs all.
 */
const SLOW_PROJECTS = {
  faults: 'test/faults/**/*.test.ts',
  cluster: 'test/cluster/**/*.test.ts',
  replica: 'test/replica/**/*.test.ts',
  browser: 'test/browser/**/*.test.ts',
  observability: 'test/observability/**/*.test.ts',
  bench: 'loadtest/test/smoke.test.ts',
};

export default defineConfig({
  test: {
    globalSetup: ['./test/support/global-setup.ts'],
    // Test files run in parallel, each against its own database and Redis key prefix.
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    reporters: ['default'],
    projects: [
      {
        extends: true,
        test: {
          name: 'fast',
          include: ['test/**/*.test.ts', 'packages/*/test/**/*.test.ts', 'services/*/test/**/*.test.ts', 'loadtest/test/**/*.test.ts'],
          exclude: ['**/node_modules/**', ...Object.values(SLOW_PROJECTS)],
        },
      },
      // After the fast project; the fault tests last and one file at a time, since they time recoveries.
      ...Object.entries(SLOW_PROJECTS).map(([name, include]) => ({
        extends: true as const,
        test: { name, include: [include], sequence: { groupOrder: name === 'faults' ? 2 : 1 }, fileParallelism: name !== 'faults' },
      })),
    ],
  },
});
