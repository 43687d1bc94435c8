import { describe, expect, it, vi } from 'vitest';
import type { ReceivedMessage } from '../../../lambdas/core/ports.js';
import { HANDOFF_BELOW_HANDLED, runSlice } from '../../../lambdas/core/slice.js';
import { lease, policy, setup, store, T0 } from '../support/slice-world.js';

/**
 * The confirm queue (issue #11): a slice whose short polls come back empty hands its slot on (`confirm`) instead of
 * long-polling; the confirm slice starts with the long poll and makes the empty decision itself.
 */
const withConfirmQueue = (opts: Parameters<typeof setup>[0] = {}) => {
  const world = setup(opts);
  world.deps.settings = { ...world.deps.settings, confirmQueue: true };
  const waits: number[] = [];
  vi.mocked(world.tasks.receive).mockImplementation(
    async (_url, { maxMessages, waitSeconds }): Promise<ReceivedMessage[]> => {
      waits.push(waitSeconds);
      world.w.now += waitSeconds > 0 ? 1_000 : 5;
      return world.w.queue.splice(0, maxMessages);
    },
  );
  return { ...world, waits };
};

describe('a slice with a confirm queue', () => {
  it('ends `confirm` when its short poll comes back empty: no long poll, no idle decision', async () => {
    const world = withConfirmQueue();
    const result = await runSlice(world.deps, store, policy(), lease());
    expect({ result, waits: world.waits, idle: world.dispatch.markIdle.mock.calls.length }).toStrictEqual({
      result: {
        end: 'confirm',
        handled: 0,
        delivered: 0,
        deadLettered: 0,
        idle: false,
        nextCallAt: T0,
        resumeAt: T0 + 5,
      },
      waits: [0],
      idle: 0,
    });
  });

  it('hands on only after its backlog: delivers what the short polls bring, then ends `confirm`', async () => {
    const world = withConfirmQueue({ messages: 3 });
    const result = await runSlice(world.deps, store, policy(), lease());
    expect({ end: result.end, delivered: result.delivered, waits: world.waits }).toEqual({
      end: 'confirm',
      delivered: 3,
      waits: [0, 0],
    });
  });

  it('as the confirm slice, starts with the long poll and marks the store idle when it finds nothing', async () => {
    const world = withConfirmQueue();
    const result = await runSlice(world.deps, store, policy(), lease({ confirming: true }));
    expect({ end: result.end, idle: result.idle, waits: world.waits }).toEqual({
      end: 'empty',
      idle: true,
      waits: [1],
    });
    // The empty answer holds as of when the long poll began, not when it answered.
    expect(world.dispatch.markIdle.mock.calls[0]?.[3]).toMatchObject({ now: T0 });
  });

  it('as the confirm slice, delivers what its long poll finds and yields, never handing on again', async () => {
    const world = withConfirmQueue({ messages: 2 });
    const result = await runSlice(world.deps, store, policy(), lease({ confirming: true }));
    expect({ end: result.end, delivered: result.delivered, waits: world.waits }).toEqual({
      end: 'yielded',
      delivered: 2,
      waits: [1],
    });
  });

  it('as the confirm slice, told of new work at its empty decision, yields it to a slice of the pool at once', async () => {
    const world = withConfirmQueue();
    world.dispatch.markIdle.mockResolvedValueOnce({
      ok: false,
      current: {
        storeId: 's1',
        enqSeq: 8,
        slots: { a: { s: 'l', at: T0 + 35_000, f: 1 } },
      },
    });
    const result = await runSlice(world.deps, store, policy(), lease({ confirming: true }));
    expect({ end: result.end, resumeAt: result.resumeAt, waits: world.waits }).toEqual({
      end: 'yielded',
      resumeAt: T0 + 1_000,
      waits: [1],
    });
  });

  it('without a confirm queue, long-polls at the end of its slice as before', async () => {
    const world = withConfirmQueue();
    world.deps.settings = { ...world.deps.settings, confirmQueue: false };
    const result = await runSlice(world.deps, store, policy(), lease());
    expect({ end: result.end, waits: world.waits }).toEqual({ end: 'empty', waits: [0, 1] });
  });
});

describe('a slice that keeps its empty decision (its attention says `recheck`, or the reconciler re-announced it)', () => {
  it('makes its empty decision itself, with the long poll, rather than hand it to the confirm queue', async () => {
    const world = withConfirmQueue();
    const result = await runSlice(world.deps, store, policy(), lease({ decidesEmpty: true }));
    expect({ end: result.end, idle: result.idle, waits: world.waits }).toEqual({
      end: 'empty',
      idle: true,
      waits: [0, 1],
    });
  });
});

describe('a busy slice (a full batch handled) with a confirm queue', () => {
  it.each([
    [HANDOFF_BELOW_HANDLED - 1, 'confirm', [0, 0, 0, 0, 0, 0]],
    [HANDOFF_BELOW_HANDLED, 'empty', [0, 0, 0, 0, 0, 0, 1]],
  ] as const)(
    'after %i tasks ends %s: its store is busy, a long poll costs it little per task',
    async (n, end, waits) => {
      const world = withConfirmQueue({ messages: n });
      const result = await runSlice(world.deps, store, policy({ maxMessagesPerSlice: 100 }), lease());
      expect({ end: result.end, delivered: result.delivered, waits: world.waits }).toEqual({
        end,
        delivered: n,
        waits,
      });
    },
  );
});
