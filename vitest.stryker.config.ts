import { defineConfig } from 'vitest/config';

// Stryker runs the unit project only: it is in-process and fast (~4 s of tests), so thousands of mutant runs stay
// affordable. The integration project starts emulators, and the simulation runs seeds for up to a minute per
// mutant it covers; neither fits a per-mutant loop on a shared two-core machine. The benchmark's unit test
// (test/unit/bench) is left out too: it runs the whole benchmark once in a beforeAll (~9 s), which coverage
// cannot attribute to single tests, so it would run for every mutant, and it asserts the designs' aggregate
// figures, not the protocol's behaviour.
export default defineConfig({
  test: {
    name: 'unit',
    include: ['test/unit/**/*.test.ts'],
    exclude: ['test/unit/bench/**'],
    env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
  },
});
