import { TIMEOUT_INVARIANT } from './invariants.js';
import type { Variant } from './protocol-variant.js';

/**
 * Broken variants of the worker's batches (issue #11: several attentions per invocation, run concurrently),
 * rejected by the Lambda-timeout invariant (12).
 */
export const BATCH_VARIANTS: Variant[] = [
  {
    name: 'batch-in-sequence',
    breaks: TIMEOUT_INVARIANT,
    description:
      "the invocation runs its records' slices one after another (a batch processor without processInParallel): a later record's lease starts well into the invocation, and a slice of the longest plan would outlive the Lambda timeout",
    runBatch: async (records) => {
      const results: PromiseSettledResult<unknown>[] = [];
      for (const run of records) {
        try {
          results.push({ status: 'fulfilled', value: await run() });
        } catch (reason) {
          results.push({ status: 'rejected', reason });
        }
      }
      return results;
    },
  },
];
