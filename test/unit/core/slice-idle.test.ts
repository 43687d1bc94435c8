import { describe, expect, it, vi } from 'vitest';
import type { DispatchItem } from '../../../lambdas/core/dispatch-model.js';
import type { ReceivedMessage } from '../../../lambdas/core/ports.js';
import { runSlice } from '../../../lambdas/core/slice.js';
import { item, lease, policy, setup, store, T0 } from '../support/slice-world.js';

/** The "empty" decision (tryIdle): when a slice may mark its store idle, and what else it does instead. */
const refused = (current: DispatchItem | undefined) => ({ ok: false as const, current });
const mine = { s: 'l' as const, at: T0 + 35_000, f: 1 };
const other = { s: 'q' as const, at: T0 };

/** A world whose empty check's long poll takes `pollMs`: the "empty" holds as of when the polls began. */
const slowPolls = (pollMs: number) => {
  const world = setup();
  vi.mocked(world.tasks.receive).mockImplementation(
    async (_url, { waitSeconds }): Promise<ReceivedMessage[]> => {
      if (waitSeconds > 0) world.w.now += pollMs;
      return [];
    },
  );
  return world;
};

describe('the empty decision', () => {
  it('records the time to drain from the store’s active mark, and never a negative one', async () => {
    const drained = setup();
    await runSlice(drained.deps, store, policy(), lease({ activeSince: T0 - 5_000 }));
    const skewed = setup();
    await runSlice(skewed.deps, store, policy(), lease({ activeSince: T0 + 10 }));
    expect([
      drained.dispatch.markIdle.mock.calls[0]?.[3],
      skewed.dispatch.markIdle.mock.calls[0]?.[3],
    ]).toEqual([
      { seenSeq: 7, now: T0, tat: T0, drainMs: 5_000 },
      { seenSeq: 7, now: T0, tat: T0, drainMs: 0 },
    ]);
  });

  it('carries no pace for a store with several consumers (they share the schedule in the dispatch item)', async () => {
    const world = setup();
    world.dispatch.markIdle.mockResolvedValueOnce(refused(item({ slots: { a: mine, b: other } })));
    await runSlice(world.deps, store, policy({ maxConcurrentConsumers: 2 }), lease());
    expect({
      idle: world.dispatch.markIdle.mock.calls[0]?.[3],
      release: world.dispatch.release.mock.calls[0],
    }).toEqual({ idle: { seenSeq: 7, now: T0 }, release: ['s1', 'a', 1, undefined] });
  });

  it('looks again while an ingest is between its write-ahead and its end, as of when the polls began', async () => {
    const world = slowPolls(1_000);
    // The ingest's guard ran out during the long poll, but not before it began.
    world.dispatch.markIdle.mockResolvedValueOnce(refused(item({ ingesting: 1, ingestUntil: T0 + 500 })));
    const result = await runSlice(world.deps, store, policy(), lease());
    expect({
      result,
      tries: world.dispatch.markIdle.mock.calls.map((c) => c[3].now),
      released: world.dispatch.release.mock.calls.length,
    }).toEqual({
      // Nothing received: no oldest task to report.
      result: { end: 'empty', handled: 0, delivered: 0, deadLettered: 0, idle: true, nextCallAt: T0 },
      tries: [T0, T0 + 1_000],
      released: 0,
    });
  });

  it.each([
    ['its guard ended when the polls began', { ingesting: 1, ingestUntil: T0 }],
    ['no ingest is in flight (a stale guard)', { ingesting: 0, ingestUntil: T0 + 5_000 }],
  ])('does not wait for an ingest when %s: leaves its slot to the others', async (_, patch) => {
    const world = setup();
    world.dispatch.markIdle.mockResolvedValueOnce(refused(item({ slots: { a: mine, b: other }, ...patch })));
    const result = await runSlice(world.deps, store, policy(), lease());
    expect({ end: result.end, idle: result.idle, tries: world.dispatch.markIdle.mock.calls.length }).toEqual({
      end: 'empty',
      idle: false,
      tries: 1,
    });
    expect(world.dispatch.release).toHaveBeenCalledTimes(1);
  });

  it('compares a hidden task’s wake time with when the polls began, not with now', async () => {
    const world = slowPolls(10_000);
    world.dispatch.markIdle.mockResolvedValueOnce(refused(item({ wakeAt: T0 + 8_000 })));
    const result = await runSlice(world.deps, store, policy(), lease());
    expect({ end: result.end, resumeAt: result.resumeAt }).toEqual({ end: 'deferred', resumeAt: T0 + 8_000 });
  });

  it('does not defer for a wake time reached when the polls began', async () => {
    const world = setup();
    world.dispatch.markIdle.mockResolvedValueOnce(
      refused(item({ slots: { a: mine, b: other }, wakeAt: T0 })),
    );
    const result = await runSlice(world.deps, store, policy(), lease());
    expect({ end: result.end, idle: result.idle }).toEqual({ end: 'empty', idle: false });
  });

  it('looks again within 20 s while a redrive may still feed the queue', async () => {
    const world = setup();
    world.dispatch.markIdle.mockResolvedValueOnce(refused(item({ redriveAt: T0 - 1_000 })));
    const result = await runSlice(world.deps, store, policy(), lease());
    expect({
      end: result.end,
      resumeAt: result.resumeAt,
      released: world.dispatch.release.mock.calls.length,
    }).toEqual({ end: 'deferred', resumeAt: T0 + 20_000, released: 0 });
  });

  it.each([
    ['the dispatch item is gone', undefined],
    ['its slot is gone', item({ slots: { b: other } })],
    ['its slot is no longer leased', item({ slots: { a: { s: 'q', at: T0 } } })],
  ])('stops as lease_lost when %s', async (_, current) => {
    const world = setup();
    world.dispatch.markIdle.mockResolvedValueOnce(refused(current));
    const result = await runSlice(world.deps, store, policy(), lease());
    expect({ end: result.end, released: world.dispatch.release.mock.calls.length }).toEqual({
      end: 'lease_lost',
      released: 0,
    });
  });

  it.each([
    ['is gone with the whole dispatch item', undefined],
    ['is gone', item({ slots: { b: other } })],
    ['is fenced by another lease', item({ slots: { a: { ...mine, f: 2 }, b: other } })],
    ['is no longer leased', item({ slots: { a: { s: 'q', at: T0 }, b: other } })],
  ])('stops as lease_lost when a release is refused because its slot %s', async (_, current) => {
    const world = setup();
    world.dispatch.markIdle.mockResolvedValueOnce(refused(item({ slots: { a: mine, b: other } })));
    world.dispatch.release.mockResolvedValueOnce(refused(current));
    const result = await runSlice(world.deps, store, policy(), lease());
    expect({ end: result.end, tries: world.dispatch.markIdle.mock.calls.length }).toEqual({
      end: 'lease_lost',
      tries: 1,
    });
  });

  it('gives up as lease_lost after two refused releases, its slot still held', async () => {
    const world = setup();
    const two = item({ slots: { a: mine, b: other } });
    world.dispatch.markIdle.mockResolvedValue(refused(two));
    world.dispatch.release.mockResolvedValue(refused(two));
    const result = await runSlice(world.deps, store, policy(), lease());
    expect({
      end: result.end,
      tries: world.dispatch.markIdle.mock.calls.length,
      releases: world.dispatch.release.mock.calls.length,
    }).toEqual({ end: 'lease_lost', tries: 2, releases: 2 });
  });
});
