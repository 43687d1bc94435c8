import { defineConfig } from 'vitest/config';

// Stryker runs the unit project only: it is in-process and fast (~4 s of tests), so thousands of mutant runs stay
// affordable. The integration project starts emulators, and the simulation runs seeds for up to a minute per
// mutant it covers; neither fits a per-mutant loop on a shared two-core machine.
export default defineConfig({
  test: {
    name: 'unit',
    include: ['test/unit/**/*.test.ts'],
    env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
  },
});
