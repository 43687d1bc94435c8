import { beforeEach, describe, expect, it, vi } from 'vitest';
import { RecordingTelemetry, type LogRecord } from '../../../lambdas/adapters/recording-telemetry.js';
import { handleAttention } from '../../../lambdas/core/attention.js';
import type { DispatchItem } from '../../../lambdas/core/dispatch-model.js';
import type { AttentionMessage } from '../../../lambdas/core/messages.js';
import { attentionFor, workerWorld, proStore, T0, type WorkerWorld } from '../support/attention-world.js';

/**
 * The confirm queue end to end through one attention (issue #11): the main slice hands its slot on with a
 * `confirm` attention, due now; the confirm slice starts with the long poll and makes the empty decision.
 */
describe('an attention with the confirm queue', () => {
  let w: WorkerWorld;

  let logs: LogRecord[];

  beforeEach(async () => {
    logs = [];
    w = await workerWorld({
      store: proStore({ maxConcurrentConsumers: 1 }),
      telemetry: new RecordingTelemetry((record) => logs.push(record), 'info'),
    });
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
    const item = await w.dispatch.read('s1');
    expect(item?.slots['a']).toMatchObject({ s: 'q', at: w.now });
    // A hand-off is not the store's next turn: not counted, nor logged, as a republished attention.
    expect(item?.nRepublished).toBeUndefined();
    expect(logs.find((l) => l.message === 'slice ended')?.fields).toMatchObject({
      end: 'confirm',
      republished: 0,
    });
  });

  it('runs a `confirm` attention as the confirm slice: the long poll first, then idle, publishing nothing', async () => {
    const receive = vi.mocked(w.deps.tasks.receive);
    const outcome = await handleAttention(w.deps, { ...attentionFor('a'), reason: 'confirm', dueAt: T0 });
    expect(outcome).toMatchObject({ kind: 'sliced', slice: { end: 'empty', idle: true } });
    expect(receive.mock.calls.map(([, o]) => o.waitSeconds)).toEqual([1]);
    expect(w.published).toEqual([]);
    expect((await w.dispatch.read('s1'))?.slots).toEqual({});
  });

  it('hands a trickle its confirm slice caught back as `recheck`, whose slice then long-polls itself', async () => {
    const receive = vi.mocked(w.deps.tasks.receive);
    // The confirm slice's long poll finds a task that arrived meanwhile: it delivers it and yields.
    w.backlog = 1;
    const caught = await handleAttention(w.deps, { ...attentionFor('a'), reason: 'confirm', dueAt: T0 });
    expect(caught).toMatchObject({ kind: 'sliced', slice: { end: 'yielded', delivered: 1 } });
    expect(w.published.map((p) => p.message.reason)).toEqual(['recheck']);
    receive.mockClear();
    const next = await handleAttention(w.deps, w.published[0]?.message as AttentionMessage);
    expect(next).toMatchObject({ kind: 'sliced', slice: { end: 'empty', idle: true } });
    expect(receive.mock.calls.map(([, o]) => o.waitSeconds)).toEqual([0, 1]);
  });

  it.each(['resend', 'reclaim', 'repair', 'sweep', 'recheck'] as const)(
    'keeps the empty decision in the slice of a `%s` attention: no hand-off while the confirm queue may lag',
    async (reason) => {
      const receive = vi.mocked(w.deps.tasks.receive);
      const outcome = await handleAttention(w.deps, { ...attentionFor('a'), reason, dueAt: T0 });
      expect(outcome).toMatchObject({ kind: 'sliced', slice: { end: 'empty', idle: true } });
      expect(receive.mock.calls.map(([, o]) => o.waitSeconds)).toEqual([0, 1]);
      expect(w.published).toEqual([]);
    },
  );

  it.each(['ingest', 'requeue', 'fanout', 'resume', 'redrive'] as const)(
    'hands off the empty look of a `%s` attention',
    async (reason) => {
      const outcome = await handleAttention(w.deps, { ...attentionFor('a'), reason, dueAt: T0 });
      expect(outcome).toMatchObject({ kind: 'sliced', slice: { end: 'confirm' } });
      expect(w.published.map((p) => p.message.reason)).toEqual(['confirm']);
    },
  );

  it('requeues a deferred end as `recheck`: its messages are hidden for a retry, not gone', async () => {
    // The empty decision finds a message hidden until later (a retry): the store is looked at again within 20 s.
    vi.spyOn(w.dispatch, 'markIdle').mockImplementationOnce(async (storeId) => ({
      ok: false,
      current: { ...((await w.dispatch.read(storeId)) as DispatchItem), wakeAt: T0 + 60_000 },
    }));
    const outcome = await handleAttention(w.deps, { ...attentionFor('a'), reason: 'confirm', dueAt: T0 });
    expect(outcome).toMatchObject({ kind: 'sliced', slice: { end: 'deferred' } });
    expect(w.published.map((p) => p.message.reason)).toEqual(['recheck']);
  });
});
