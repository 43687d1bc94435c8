import { defineConfig } from 'vitest/config';

const env = { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' };

export default defineConfig({
  test: {
    env,
    projects: [
      { test: { name: 'unit', include: ['test/unit/**/*.test.ts'], env } },
      // The deterministic simulation's fixed seed set and its broken variants (sim/): CPU-bound, < 1 min.
      { test: { name: 'sim', include: ['test/sim/**/*.test.ts'], env, testTimeout: 120_000 } },
      {
        test: {
          name: 'infra',
          include: ['test/infra/**/*.test.ts'],
          env,
          // Every file synthesizes the stack from aws-cdk-lib, whose import is most of the project's time:
          // import it once per worker (no test here mocks a module or keeps state outside its own file).
          isolate: false,
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          env,
          // The harness starts DynamoDB Local and fauxqs once; each file runs its own local stack on them.
          globalSetup: ['test/support/emulators.global-setup.ts'],
          testTimeout: 180_000,
          hookTimeout: 120_000,
          // Files share two cores and the emulators; running them one at a time keeps timings meaningful.
          fileParallelism: false,
        },
      },
    ],
  },
});
