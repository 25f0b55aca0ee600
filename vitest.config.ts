import { defineConfig } from 'vitest/config';

/**
 * The slow projects, each runnable alone (`npx vitest run --project faults`): they start whole
 * stacks, private servers or a browser. `npm run test:fast` runs the rest; `npm test` runs all,
 * in this order after the fast project.
 */
const SLOW_PROJECTS: Record<string, string | string[]> = {
  // The product as a whole: all three services as processes from their bundles, the build of
  // those bundles and of the client and app SDK packages, the scripts that bring servers up, and the k6
  // traffic model against the real services. Each part's own tests stay in the fast project.
  e2e: [
    'test/pipeline.test.ts',
    'test/app-events.test.ts',
    'test/deferred-deep-links.test.ts',
    'test/custom-domains.test.ts',
    'test/link-import.test.ts',
    'test/firebase-rest.test.ts',
    'test/long-links.test.ts',
    'test/webhooks-pipeline.test.ts',
    'test/protected-and-capped-links.test.ts',
    'test/build.test.ts',
    'test/services-script.test.ts',
    'packages/client/test/build.test.ts',
    'packages/app-sdk/test/build.test.ts',
    'loadtest/test/k6-rules.test.ts',
    'test/lockfile.test.ts',
  ],
  faults: 'test/faults/**/*.test.ts',
  cluster: 'test/cluster/**/*.test.ts',
  replica: 'test/replica/**/*.test.ts',
  browser: 'test/browser/**/*.test.ts',
  observability: 'test/observability/**/*.test.ts',
  bench: 'loadtest/test/smoke.test.ts',
  // docker/: the four images built and the compose stack run under podman (stand-in base images).
  containers: 'test/containers/**/*.test.ts',
};

export default defineConfig({
  test: {
    globalSetup: ['./packages/test-kit/src/global-setup.ts'],
    // Test files run in parallel, each against its own database and Redis key prefix.
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    reporters: ['default'],
    // `npm test` measures coverage (--coverage) of the code that runs inside the test processes.
    // The services' entry points run only as child processes from their bundles, so they are left
    // out; the redirector's request path runs that way too and counts as not run, which is why its
    // figure is low. The thresholds sit a little under the measured figures; see docs/testing.md.
    coverage: {
      provider: 'v8',
      include: ['{packages/core,packages/client,services/api,services/worker,services/redirector}/src/**/*.{ts,mts,mjs}'],
      exclude: ['**/main.ts', 'packages/core/src/migrate-cli.ts'],
      reporter: ['text-summary', 'json-summary'],
      thresholds: {
        'packages/core/src/**': { lines: 89, statements: 87, functions: 88, branches: 81 },
        'packages/client/src/**': { lines: 91, statements: 89, functions: 86, branches: 90 },
        'services/api/src/**': { lines: 95, statements: 93, functions: 95, branches: 86 },
        'services/worker/src/**': { lines: 89, statements: 87, functions: 81, branches: 84 },
        'services/redirector/src/**': { lines: 51, statements: 49, functions: 42, branches: 46 },
      },
    },
    projects: [
      {
        extends: true,
        test: {
          name: 'fast',
          // One module graph per worker instead of one per file: importing the services again for
          // every file took 13 of the project's 53 s. Each file still gets its own database and
          // Redis prefix, and no test here mocks modules or changes process.env.
          isolate: false,
          include: ['test/**/*.test.ts', 'packages/*/test/**/*.test.ts', 'services/*/test/**/*.test.ts', 'loadtest/test/**/*.test.ts'],
          exclude: ['**/node_modules/**', ...Object.values(SLOW_PROJECTS).flat()],
        },
      },
      // After the fast project, one at a time (each starts whole stacks or servers of its own, and
      // several of them side by side on two cores made timings flaky); fault files one by one too,
      // and browser files (two Chromiums side by side failed to capture screenshots).
      ...Object.entries(SLOW_PROJECTS).map(([name, include], index) => ({
        extends: true as const,
        test: {
          name,
          include: [include].flat(),
          sequence: { groupOrder: index + 1 },
          fileParallelism: name !== 'faults' && name !== 'browser',
        },
      })),
    ],
  },
});
