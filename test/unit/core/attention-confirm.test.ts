import { beforeEach, describe, expect, it, vi } from 'vitest';
import { handleAttention } from '../../../lambdas/core/attention.js';
import type { AttentionMessage } from '../../../lambdas/core/messages.js';
import { attentionFor, workerWorld, proStore, T0, type WorkerWorld } from '../support/attention-world.js';

/**
 * The confirm queue end to end through one attention (issue #11): the main slice hands its slot on with a
 * `confirm` attention, due now; the confirm slice starts with the long poll and makes the empty decision.
 */
describe('an attention with the confirm queue', () => {
  let w: WorkerWorld;

  beforeEach(async () => {
    w = await workerWorld({ store: proStore({ maxConcurrentConsumers: 1 }) });
    w.deps.settings = { ...w.deps.settings, confirmQueue: true };
    await w.dispatch.issueSlot('s1', 'a', T0, 1, T0);
  });

  it('requeues its slot due now and publishes it as `confirm` when the short poll comes back empty', async () => {
    w.backlog = 2;
    const outcome = await handleAttention(w.deps, attentionFor('a'));
    expect(outcome).toMatchObject({ kind: 'sliced', slice: { end: 'confirm', delivered: 2 } });
    expect(w.published).toStrictEqual([
      {
        message: {
          v: 1,
          storeId: 's1',
          slotId: 'a',
          reason: 'confirm',
          issuedAt: w.now,
          priority: 'normal',
          dueAt: w.now,
        },
        delay: 0,
      },
    ]);
    const slot = (await w.dispatch.read('s1'))?.slots['a'];
    expect(slot).toMatchObject({ s: 'q', at: w.now });
  });

  it('runs a `confirm` attention as the confirm slice: the long poll first, then idle, publishing nothing', async () => {
    const receive = vi.mocked(w.deps.tasks.receive);
    const outcome = await handleAttention(w.deps, { ...attentionFor('a'), reason: 'confirm', dueAt: T0 });
    expect(outcome).toMatchObject({ kind: 'sliced', slice: { end: 'empty', idle: true } });
    expect(receive.mock.calls.map(([, o]) => o.waitSeconds)).toEqual([1]);
    expect(w.published).toEqual([]);
    expect((await w.dispatch.read('s1'))?.slots).toEqual({});
  });

  it('hands a trickle its confirm slice caught back as `trickle`, whose slice then long-polls itself', async () => {
    const receive = vi.mocked(w.deps.tasks.receive);
    // The confirm slice's long poll finds a task that arrived meanwhile: it delivers it and yields.
    w.backlog = 1;
    const caught = await handleAttention(w.deps, { ...attentionFor('a'), reason: 'confirm', dueAt: T0 });
    expect(caught).toMatchObject({ kind: 'sliced', slice: { end: 'yielded', delivered: 1 } });
    expect(w.published.map((p) => p.message.reason)).toEqual(['trickle']);
    receive.mockClear();
    const next = await handleAttention(w.deps, w.published[0]?.message as AttentionMessage);
    expect(next).toMatchObject({ kind: 'sliced', slice: { end: 'empty', idle: true } });
    expect(receive.mock.calls.map(([, o]) => o.waitSeconds)).toEqual([0, 1]);
  });
});
