import { describe, expect, it } from 'vitest';
import { runSlice } from '../../../lambdas/core/slice.js';
import { lease, policy, setup, store } from '../support/slice-world.js';

/** A multi-consumer store's calls come from blocks of instants reserved on the shared schedule (rate.ts). */
describe('a slice’s blocks on the shared schedule', () => {
  it('reserves again only the messages still in hand when a lowered rate drops its block mid-batch', async () => {
    // 3 tasks at 10/s; the first answer says 5/s: the block of 3 is too dense, the next one is for e1 and e2. Each
    // spacing is rate.ts pacedInterval's: 102.021 ms at the policy's 10/s (paced for the 5 s window), 200 ms at
    // the learnt 5/s (a lower rate keeps its own interval).
    const world = setup({
      messages: 3,
      outcome: (id) =>
        id === 'e0' ? { kind: 'ok', status: 200, limit: { perSecond: 5 } } : { kind: 'ok', status: 200 },
    });
    await runSlice(world.deps, store, policy({ maxConcurrentConsumers: 2, ratePerSecond: 10 }), lease());
    expect({
      calls: world.w.calls,
      // [write, moved by, instants]: the first block, the stretch of the lowered rate, the block of the rest.
      writes: [
        ...world.dispatch.restartTat.mock.calls.map((c) => ['restart', c[2], c[3]]),
        ...world.dispatch.advanceTat.mock.calls.map((c) => ['advance', c[1], c[2]]),
      ],
    }).toEqual({
      calls: ['e0', 'e1', 'e2'],
      writes: [
        ['restart', 306.063, 3],
        ['advance', 97.979, 0],
        ['advance', 400, 2],
      ],
    });
  });
});
