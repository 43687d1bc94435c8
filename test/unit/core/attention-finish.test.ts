import { beforeEach, describe, expect, it, vi } from 'vitest';
import { RecordingTelemetry, type LogRecord } from '../../../lambdas/adapters/recording-telemetry.js';
import { handleAttention } from '../../../lambdas/core/attention.js';
import { MetricNames } from '../../../lambdas/core/names.js';
import { attentionFor, workerWorld, proStore, T0, type WorkerWorld } from '../support/attention-world.js';

/** How a slice's end is written back: measures, the backlog's head, a slice that threw, a store with no item. */
const attention = attentionFor('a');

describe('the end of a slice', () => {
  let w: WorkerWorld;

  beforeEach(async () => {
    w = await workerWorld({
      store: proStore({ maxConcurrentConsumers: 1, maxMessagesPerSlice: 2, ratePerSecond: 1000 }),
    });
    w.backlog = 5;
    await w.dispatch.issueSlot('s1', 'a', T0, 1, T0);
  });

  it('moves the backlog head to the oldest task it saw, and counts no throttle, on a full slice', async () => {
    const outcome = await handleAttention(w.deps, attention);
    expect(outcome).toMatchObject({ kind: 'sliced', slice: { end: 'max_messages' } });
    const item = await w.dispatch.read('s1');
    expect(item?.headSentAt).toBeLessThan(T0 - 50_000);
    expect(item?.nThrottled).toBeUndefined();
    expect(item?.nRepublished).toBe(1);
  });

  it("writes a lone consumer's pace to the store's schedule as it hands its slot back", async () => {
    const requeue = vi.spyOn(w.dispatch, 'requeue');
    await handleAttention(w.deps, attention);
    const item = await w.dispatch.read('s1');
    const slot = item?.slots['a'];
    // A cap raised meanwhile makes the next lease pace on the shared schedule: it must start after this one.
    expect(slot?.s === 'q' && slot.n).toBeGreaterThan(T0);
    expect(item?.tat).toBe(slot?.n);
    expect(requeue.mock.calls[0]?.[3].tat).toBe(slot?.n);
  });

  it('leaves the schedule to the shared pacer when the slice had several consumers', async () => {
    w.store = proStore({ maxConcurrentConsumers: 3, maxMessagesPerSlice: 2, ratePerSecond: 1000 });
    const requeue = vi.spyOn(w.dispatch, 'requeue');
    await handleAttention(w.deps, attention);
    expect(requeue).toHaveBeenCalledTimes(1);
    expect(requeue.mock.calls[0]?.[3]).not.toHaveProperty('tat');
  });

  it('counts a throttled slice on the store', async () => {
    w.deps.marketplace.deliver = vi.fn(async () => ({
      kind: 'throttled' as const,
      status: 429,
      retryAfterSeconds: 3,
    }));
    const outcome = await handleAttention(w.deps, attention);
    expect(outcome).toMatchObject({ kind: 'sliced', slice: { end: 'throttled' } });
    expect((await w.dispatch.read('s1'))?.nThrottled).toBe(1);
  });

  it('turns a slice that threw into an error end, looked at again in 5 s', async () => {
    w.backlog = 0;
    vi.spyOn(w.dispatch, 'markIdle').mockRejectedValue(new Error('DynamoDB unavailable'));
    const outcome = await handleAttention(w.deps, attention);
    expect(outcome).toEqual({
      kind: 'sliced',
      slice: expect.objectContaining({
        end: 'error',
        handled: 0,
        delivered: 0,
        deadLettered: 0,
        idle: false,
      }),
    });
    expect(w.published.map((p) => [p.message.reason, p.delay])).toEqual([['requeue', 5]]);
    expect(w.telemetry.total(MetricNames.slicesStarted)).toBe(1);
  });

  it('holds the store until a Retry-After the slice was told when the slice ends on an error', async () => {
    w.deps.marketplace.deliver = vi.fn(async () => ({
      kind: 'throttled' as const,
      status: 429,
      retryAfterSeconds: 30,
    }));
    // The settle after the 429 fails: the slice's own hold (after it) is never written.
    vi.spyOn(w.deps.deliveries, 'settle').mockRejectedValue(new Error('DynamoDB unavailable'));
    const hold = vi.spyOn(w.dispatch, 'holdTat');
    const outcome = await handleAttention(w.deps, attention);
    expect(outcome).toMatchObject({ kind: 'sliced', slice: { end: 'error', throttledUntil: T0 + 30_000 } });
    expect(hold.mock.calls.map(([, until]) => until)).toContain(T0 + 30_000);
  });

  it.each([
    ['ends empty', 1, 'empty'],
    ['ends on the quota, its messages in hand re-sent', 5, 'throttled'],
  ])('writes a spent quota’s hold the slice could not, however it ended: %s', async (_name, backlog, end) => {
    w.backlog = backlog;
    w.deps.marketplace.deliver = vi.fn(async () => ({
      kind: 'ok' as const,
      status: 200,
      limit: { perSecond: 1000, remaining: 0, resetSeconds: 30 },
    }));
    const holdTat = w.dispatch.holdTat.bind(w.dispatch);
    const hold = vi
      .spyOn(w.dispatch, 'holdTat')
      .mockRejectedValueOnce(new Error('DynamoDB unavailable'))
      .mockImplementation(holdTat);
    const outcome = await handleAttention(w.deps, attention);
    expect(outcome).toMatchObject({ kind: 'sliced', slice: { end } });
    expect(hold).toHaveBeenCalledTimes(2);
    expect(hold.mock.calls[1]?.[1]).toBe(hold.mock.calls[0]?.[1]);
    expect((await w.dispatch.read('s1'))?.tat).toBeGreaterThanOrEqual(T0 + 30_000);
  });

  it('lets a hand-back refused with no item left go quietly', async () => {
    vi.spyOn(w.dispatch, 'requeue').mockResolvedValue({ ok: false, current: undefined });
    const release = vi.spyOn(w.dispatch, 'release');
    await expect(handleAttention(w.deps, attention)).resolves.toMatchObject({ kind: 'sliced' });
    expect(release).not.toHaveBeenCalled();
  });

  it('calls an attention for a store with no dispatch item stale', async () => {
    w.dispatch.items.delete('s1');
    expect(await handleAttention(w.deps, attention)).toEqual({ kind: 'discarded', reason: 'stale' });
  });

  it('counts a lease blocked over the limit by its reason', async () => {
    await w.dispatch.issueSlot('s1', 'b', T0, 3, T0);
    expect(await handleAttention(w.deps, attention)).toEqual({ kind: 'discarded', reason: 'over_limit' });
    expect(w.telemetry.total(MetricNames.leaseBlocked, { reason: 'over_limit' })).toBe(1);
  });

  describe('its log line and telemetry scope', () => {
    let logs: LogRecord[];
    const ended = () => logs.find((l) => l.message === 'slice ended')?.fields;

    beforeEach(() => {
      logs = [];
      w.deps.telemetry = new RecordingTelemetry((record) => void logs.push(record), 'info');
    });

    it('names the slice by slot and fence, with how long it ran and that its attention went back', async () => {
      // Each call takes a second: two calls fill the slice.
      w.deps.marketplace.deliver = vi.fn(async () => {
        w.now += 1_000;
        return { kind: 'ok' as const, status: 200 };
      });
      await handleAttention(w.deps, attention);
      expect(ended()).toMatchObject({
        sliceId: 'a:1',
        end: 'max_messages',
        republished: 1,
        handled: 2,
        delivered: 2,
        durationMs: 2_000,
        effectiveSource: 'store',
      });
    });

    it('logs an idle slice as not republished, and writes no hand-back after its idle mark', async () => {
      w.backlog = 0;
      const requeue = vi.spyOn(w.dispatch, 'requeue');
      await handleAttention(w.deps, attention);
      expect({ republished: ended()?.['republished'], requeues: requeue.mock.calls.length }).toEqual({
        republished: 0,
        requeues: 0,
      });
    });

    it('logs a slice whose hand-back was refused as not republished', async () => {
      vi.spyOn(w.dispatch, 'requeue').mockResolvedValue({ ok: false, current: undefined });
      await handleAttention(w.deps, attention);
      expect({ end: ended()?.['end'], republished: ended()?.['republished'] }).toEqual({
        end: 'max_messages',
        republished: 0,
      });
    });

    it('counts no slice under a campaign when the store runs under its own policy', async () => {
      const telemetry = w.deps.telemetry as RecordingTelemetry;
      await handleAttention(w.deps, attention);
      expect({
        started: telemetry.total(MetricNames.slicesStarted),
        underCampaign: telemetry.total(MetricNames.slicesUnderCampaign),
      }).toEqual({ started: 1, underCampaign: 0 });
    });

    it('ends its telemetry scope (the metrics flush) once, also when the attention fails', async () => {
      const telemetry = w.deps.telemetry as RecordingTelemetry;
      const scope = telemetry.scoped.bind(telemetry);
      const ends: ReturnType<typeof vi.fn>[] = [];
      vi.spyOn(telemetry, 'scoped').mockImplementation((fields) => {
        const scoped = scope(fields);
        const end = vi.fn();
        ends.push(end);
        return Object.assign(scoped, { end });
      });
      vi.spyOn(w.dispatch, 'acquire').mockRejectedValue(new Error('DynamoDB unavailable'));
      await expect(handleAttention(w.deps, attention)).rejects.toThrow('DynamoDB unavailable');
      expect(ends.map((end) => end.mock.calls.length)).toEqual([1]);
    });
  });
});

describe('a slice over a lowered cap whose fellow slice ended at the same moment', () => {
  it('requeues again when its release is refused as the last slot: the store is not left to a reclaim', async () => {
    const w = await workerWorld({
      store: proStore({ maxConcurrentConsumers: 1, maxMessagesPerSlice: 2, ratePerSecond: 1000 }),
    });
    w.backlog = 5;
    await w.dispatch.issueSlot('s1', 'a', T0, 1, T0);
    const mine = async () => ({ ok: false as const, current: await w.dispatch.read('s1') });
    // The first requeue finds the other slot still there (over the cap); by the release it has gone.
    vi.spyOn(w.dispatch, 'requeue').mockImplementationOnce(mine);
    vi.spyOn(w.dispatch, 'release').mockImplementationOnce(mine);
    const outcome = await handleAttention(w.deps, attention);
    expect(outcome).toMatchObject({ kind: 'sliced', slice: { end: 'max_messages' } });
    expect((await w.dispatch.read('s1'))?.slots['a']).toMatchObject({ s: 'q' });
    expect(w.published.map((p) => p.message.reason)).toEqual(['requeue']);
  });
});
