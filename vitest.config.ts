import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts', 'bench/test/unit/**/*.test.ts'],
          // A guard against hangs, not a speed check: the split assignment and permutation
          // tests compute over 10^5 to 10^6 items and take seconds on a loaded 2-core machine.
          testTimeout: 30_000,
          // The files share one module graph instead of each importing the product anew (sharp,
          // the native module, grpc): on this 2-core machine 10 s of imports instead of 50 s, a
          // third less CPU for the unit run. A file that changes module state or process.env
          // puts it back after its tests (settings.test.ts, dbSecurityConfig.test.ts do).
          isolate: false,
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts', 'bench/test/integration/**/*.test.ts'],
          globalSetup: ['test/integration/globalSetup.ts'],
          testTimeout: 120_000,
          hookTimeout: 600_000,
          // One real node on 2 cores: files run one after another so timings stay sane.
          // scripts/test.sh runs the files other than the fault files two at a time
          // (--fileParallelism --maxWorkers=2): they assert correctness, not timings.
          fileParallelism: false,
        },
      },
    ],
  },
});
