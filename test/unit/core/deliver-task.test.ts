import { describe, expect, it, vi } from 'vitest';
import { RecordingTelemetry } from '../../../lambdas/adapters/recording-telemetry.js';
import {
  backoffSeconds,
  deliverTask,
  CLAIM_MARGIN_MS,
  DEFAULT_RETRY_AFTER_SECONDS,
  type DeliverDeps,
} from '../../../lambdas/core/deliver-task.js';
import type {
  DeliveryOutcome,
  Marketplace,
  ReceivedMessage,
  TaskQueues,
} from '../../../lambdas/core/ports.js';
import { MAX_RECEIVE_COUNT } from '../../../lambdas/core/plans.js';
import { CLOCK_SKEW_MS, MAX_DELAY_SECONDS } from '../../../lambdas/core/timing.js';
import { MemoryDeliveryLog } from '../../support/memory-delivery-log.js';
import { receivedTask, taskWork } from '../support/deliver-fixtures.js';
import { fixedClock, storeRecord, T0 } from '../support/fixtures.js';

describe('backoffSeconds', () => {
  const ATTEMPTS = Array.from({ length: 15 }, (_, i) => i + 1);

  it.each(ATTEMPTS)('after attempt %d waits at least 1 s', (attempt) => {
    expect(backoffSeconds(attempt, () => 0)).toBe(1);
  });

  it.each(ATTEMPTS)('after attempt %d waits at most 2^attempt s, capped at 900 s', (attempt) => {
    expect(backoffSeconds(attempt, () => 0.999_999)).toBe(Math.min(MAX_DELAY_SECONDS, 2 ** attempt));
  });

  it.each([
    [1, 0.5, 1],
    [2, 0.5, 2],
    [4, 0.5, 8],
    [4, 0.26, 5],
  ])('after attempt %d with jitter %d waits %d s', (attempt, random, seconds) => {
    expect(backoffSeconds(attempt, () => random)).toBe(seconds);
  });

  it('treats attempt 0 like the first', () => {
    expect(backoffSeconds(0, () => 0.999_999)).toBe(2);
  });

  it('never exceeds SQS’s 900 s visibility hop, however many attempts', () => {
    expect(backoffSeconds(1_000, () => 0.999_999)).toBe(MAX_DELAY_SECONDS);
  });
});

describe('deliverTask', () => {
  const work = taskWork({ entityId: 'A', version: 3 });
  const policy = { maxAttempts: 3 };
  const message = (body = JSON.stringify(work)): ReceivedMessage => receivedTask(body);

  const depsWith = (...outcomes: DeliveryOutcome[]) => {
    const deliver = vi.fn<Marketplace['deliver']>(
      async () => outcomes.shift() ?? { kind: 'ok', status: 200 },
    );
    const deadLetter = vi.fn<TaskQueues['deadLetter']>(async () => undefined);
    const deliveries = new MemoryDeliveryLog();
    let id = 0;
    const deps: DeliverDeps = {
      tasks: { deadLetter } as unknown as TaskQueues,
      marketplace: { deliver },
      deliveries,
      clock: fixedClock(),
      ids: { next: () => `attempt-${++id}` },
      telemetry: new RecordingTelemetry(),
      random: () => 0.5,
      settings: { marketplaceTimeoutMs: 5_000 },
    };
    return { deps, deliver, deadLetter, deliveries };
  };

  it('sends the marketplace the contract’s body with entityId and version', async () => {
    const { deps, deliver } = depsWith({ kind: 'ok', status: 200 });
    await deliverTask(deps, storeRecord(), policy, message());
    expect(deliver.mock.calls[0]?.[0].body).toEqual({
      eventId: 'evt-1',
      type: 'inventory.update',
      payload: { sku: 'A', quantity: 1 },
      entityId: 'A',
      version: 3,
    });
  });

  it('forwards {storeId}:{eventId} as the Idempotency-Key', async () => {
    const { deps, deliver } = depsWith({ kind: 'ok', status: 200 });
    await deliverTask(deps, storeRecord(), policy, message());
    expect(deliver.mock.calls[0]?.[0].idempotencyKey).toBe('store-1:evt-1');
  });

  it('delivers a duplicate message once: the second finds the task delivered', async () => {
    const { deps, deliver } = depsWith();
    const first = await deliverTask(deps, storeRecord(), policy, message());
    const second = await deliverTask(deps, storeRecord(), policy, message());
    expect({ first, second, calls: deliver.mock.calls.length }).toEqual({
      first: { kind: 'done', as: 'delivered' },
      second: { kind: 'done', as: 'duplicate' },
      calls: 1,
    });
  });

  it('backs a duplicate off while another attempt holds the task, without calling the marketplace', async () => {
    const { deps, deliver, deliveries } = depsWith();
    await deliveries.claim('store-1', 'evt-1', {
      holder: 'other',
      now: T0,
      until: T0 + 7_000,
      messageId: 'other',
    });
    await expect(deliverTask(deps, storeRecord(), policy, message())).resolves.toEqual({
      kind: 'retry',
      afterSeconds: 7,
    });
    expect(deliver).not.toHaveBeenCalled();
  });

  it('takes over a task whose previous attempt crashed once its claim has expired', async () => {
    const { deps, deliver, deliveries } = depsWith();
    await deliveries.claim('store-1', 'evt-1', {
      holder: 'crashed',
      now: T0 - 60_000,
      until: T0 - 1,
      messageId: 'other',
    });
    await expect(deliverTask(deps, storeRecord(), policy, message())).resolves.toEqual({
      kind: 'done',
      as: 'delivered',
    });
    expect(deliver).toHaveBeenCalledTimes(1);
  });

  it('drops a task older than the version already delivered for its entity, as stale', async () => {
    const { deps, deliver, deliveries } = depsWith();
    deliveries.raiseVersion('store-1', 'A', 4);
    await expect(deliverTask(deps, storeRecord(), policy, message())).resolves.toEqual({
      kind: 'done',
      as: 'stale',
    });
    expect({
      calls: deliver.mock.calls.length,
      status: (await deliveries.get('store-1', 'evt-1'))?.status,
    }).toEqual({
      calls: 0,
      status: 'stale',
    });
  });

  it('delivers the same version again under another eventId (only lower versions are stale)', async () => {
    const { deps, deliveries } = depsWith();
    deliveries.raiseVersion('store-1', 'A', 3);
    await expect(deliverTask(deps, storeRecord(), policy, message())).resolves.toEqual({
      kind: 'done',
      as: 'delivered',
    });
  });

  it('records the delivered version of the entity', async () => {
    const { deps, deliveries } = depsWith();
    await deliverTask(deps, storeRecord(), policy, message());
    expect(await deliveries.deliveredVersion('store-1', 'A')).toBe(3);
  });

  it('marks the version before the call, so a call that timed out still makes older versions stale', async () => {
    const { deps, deliver, deliveries } = depsWith({ kind: 'transient', error: 'timeout' });
    await expect(deliverTask(deps, storeRecord(), policy, message())).resolves.toMatchObject({
      kind: 'retry',
    });
    const older = await deliverTask(deps, storeRecord(), policy, {
      ...message(JSON.stringify({ ...work, eventId: 'evt-0', version: 2 })),
      messageId: 'm0',
    });
    expect({
      older,
      calls: deliver.mock.calls.length,
      mark: await deliveries.deliveredVersion('store-1', 'A'),
    }).toEqual({
      older: { kind: 'done', as: 'stale' },
      calls: 1,
      mark: 3,
    });
  });

  it('marks the version before the rate wait, and a task the rate did not let start passes it again', async () => {
    const { deps, deliver, deliveries } = depsWith();
    const first = await deliverTask(deps, storeRecord(), policy, message(), async () => false);
    const mark = await deliveries.deliveredVersion('store-1', 'A');
    const retried = await deliverTask(deps, storeRecord(), policy, message());
    expect({ first, mark, retried, calls: deliver.mock.calls.length }).toEqual({
      first: { kind: 'not_started' },
      mark: 3,
      retried: { kind: 'done', as: 'delivered' },
      calls: 1,
    });
  });

  it('spends no rate instant on a stale task', async () => {
    const { deps, deliveries } = depsWith();
    deliveries.raiseVersion('store-1', 'A', 9);
    const pace = vi.fn(async () => true);
    await deliverTask(deps, storeRecord(), policy, message(), pace);
    expect(pace).not.toHaveBeenCalled();
  });

  it.each<[DeliveryOutcome, unknown]>([
    [
      { kind: 'ok', status: 200 },
      { kind: 'done', as: 'delivered' },
    ],
    [
      { kind: 'throttled', status: 429, retryAfterSeconds: 30 },
      { kind: 'throttled', afterSeconds: 30 },
    ],
    [
      { kind: 'throttled', status: 429 },
      { kind: 'throttled', afterSeconds: DEFAULT_RETRY_AFTER_SECONDS },
    ],
    [
      { kind: 'throttled', status: 429, retryAfterSeconds: 0 },
      { kind: 'throttled', afterSeconds: 1 },
    ],
    [
      { kind: 'throttled', status: 429, retryAfterSeconds: 5_000 },
      { kind: 'throttled', afterSeconds: 900 },
    ],
    [
      { kind: 'transient', status: 503, error: 'x' },
      { kind: 'retry', afterSeconds: 1 },
    ],
    [
      { kind: 'permanent', status: 422, error: 'x' },
      { kind: 'done', as: 'dead_lettered' },
    ],
  ])('turns %j into %j', async (outcome, result) => {
    const { deps } = depsWith(outcome);
    await expect(deliverTask(deps, storeRecord(), policy, message())).resolves.toEqual(result);
  });

  it('dead-letters after the plan’s maxAttempts transient failures, with attempts and times', async () => {
    const failure: DeliveryOutcome = { kind: 'transient', status: 503, error: 'marketplace answered 503' };
    const { deps, deadLetter, deliveries } = depsWith(failure, failure, failure);
    const results = [];
    for (let i = 0; i < 3; i++) results.push(await deliverTask(deps, storeRecord(), policy, message()));
    expect(results.map((r) => r.kind)).toEqual(['retry', 'retry', 'done']);
    expect(deadLetter.mock.calls[0]?.[2]).toEqual({
      code: 'retries_exhausted',
      message: 'marketplace answered 503',
      lastStatus: 503,
      attempts: 3,
      firstAttemptAt: T0,
      lastAttemptAt: T0,
    });
    expect(await deliveries.get('store-1', 'evt-1')).toMatchObject({ status: 'dead_lettered', attempts: 3 });
  });

  it('does not count a 429 as an attempt against the task', async () => {
    const { deps, deliveries } = depsWith(
      { kind: 'throttled', status: 429 },
      { kind: 'throttled', status: 429 },
    );
    await deliverTask(deps, storeRecord(), policy, message());
    await deliverTask(deps, storeRecord(), policy, message());
    expect(await deliveries.get('store-1', 'evt-1')).toMatchObject({ status: 'pending', lastStatus: 429 });
    expect((await deliveries.get('store-1', 'evt-1'))?.attempts).toBeUndefined();
  });

  it('dead-letters a task at SQS’s receive limit itself, so its status says so (no call, no attempt counted)', async () => {
    const failure: DeliveryOutcome = { kind: 'transient', status: 503, error: 'marketplace answered 503' };
    const { deps, deliver, deadLetter, deliveries } = depsWith(failure);
    await deliverTask(deps, storeRecord(), policy, message());
    const result = await deliverTask(deps, storeRecord(), policy, {
      ...message(),
      receiveCount: MAX_RECEIVE_COUNT,
    });
    expect({
      result,
      calls: deliver.mock.calls.length,
      reason: deadLetter.mock.calls[0]?.[2],
      record: await deliveries.get('store-1', 'evt-1'),
    }).toMatchObject({
      result: { kind: 'done', as: 'dead_lettered' },
      calls: 1,
      reason: {
        code: 'receive_limit',
        message: `received ${MAX_RECEIVE_COUNT} times without an outcome`,
        lastStatus: 503,
        attempts: 1,
      },
      record: { status: 'dead_lettered', attempts: 1 },
    });
  });

  it('handles a task one receive below the limit as usual', async () => {
    const { deps, deliver } = depsWith();
    await deliverTask(deps, storeRecord(), policy, { ...message(), receiveCount: MAX_RECEIVE_COUNT - 1 });
    expect(deliver).toHaveBeenCalledTimes(1);
  });

  it('dead-letters a message that is not a task without calling the marketplace', async () => {
    const { deps, deliver, deadLetter } = depsWith();
    await deliverTask(deps, storeRecord(), policy, message('{"not":"a task"}'));
    expect({ calls: deliver.mock.calls.length, reason: deadLetter.mock.calls[0]?.[2] }).toEqual({
      calls: 0,
      reason: { code: 'invalid_message', message: 'not a valid task message', attempts: 0 },
    });
  });

  it('dead-letters a task addressed to another store', async () => {
    const { deps, deliver } = depsWith();
    const result = await deliverTask(
      deps,
      storeRecord(),
      policy,
      message(JSON.stringify({ ...work, storeId: 'store-2' })),
    );
    expect({ result, calls: deliver.mock.calls.length }).toEqual({
      result: { kind: 'done', as: 'dead_lettered' },
      calls: 0,
    });
  });

  it('records why a task was dead-lettered, for the status route', async () => {
    const { deps, deliveries } = depsWith({
      kind: 'permanent',
      status: 422,
      error: 'marketplace answered 422',
    });
    await deliverTask(deps, storeRecord(), policy, message());
    expect(await deliveries.get('store-1', 'evt-1')).toMatchObject({
      status: 'dead_lettered',
      attempts: 1,
      lastStatus: 422,
      lastError: 'marketplace_rejected: marketplace answered 422',
    });
  });

  describe('at the edges (issue #10)', () => {
    it('never calls again for the message a task was dead-lettered from (its delete was lost)', async () => {
      const { deps, deliver, deliveries } = depsWith({ kind: 'permanent', status: 422, error: 'no' });
      await deliverTask(deps, storeRecord(), policy, message());
      const again = await deliverTask(deps, storeRecord(), policy, { ...message(), receiveCount: 2 });
      expect({
        again,
        calls: deliver.mock.calls.length,
        status: (await deliveries.get('store-1', 'evt-1'))?.status,
      }).toEqual({
        again: { kind: 'done', as: 'duplicate' },
        calls: 1,
        status: 'dead_lettered',
      });
    });

    it('calls again for a redriven copy of a dead-lettered task (another message)', async () => {
      const { deps, deliver } = depsWith(
        { kind: 'permanent', status: 422, error: 'no' },
        { kind: 'ok', status: 200 },
      );
      await deliverTask(deps, storeRecord(), policy, message());
      const redriven = await deliverTask(deps, storeRecord(), policy, {
        ...message(),
        messageId: 'm-redriven',
      });
      expect({ redriven, calls: deliver.mock.calls.length }).toEqual({
        redriven: { kind: 'done', as: 'delivered' },
        calls: 2,
      });
    });

    it('gives a redriven copy a fresh maxAttempts budget, its attempts still counting every call', async () => {
      const failure: DeliveryOutcome = { kind: 'transient', status: 503, error: 'marketplace answered 503' };
      const { deps, deliver, deliveries } = depsWith(failure, failure, failure, failure, failure, failure);
      const results = [];
      for (let i = 0; i < 3; i++) results.push(await deliverTask(deps, storeRecord(), policy, message()));
      expect(await deliveries.get('store-1', 'evt-1')).toMatchObject({
        status: 'dead_lettered',
        deadAttempts: 3,
      });
      const redriven = { ...message(), messageId: 'm-redriven' };
      for (let i = 0; i < 3; i++) results.push(await deliverTask(deps, storeRecord(), policy, redriven));
      // Three calls again before the second dead-lettering (the plan's maxAttempts), not one; the backoff
      // starts over too (the first retry's, not the sixth call's).
      expect(results.map((r) => r.kind)).toEqual(['retry', 'retry', 'done', 'retry', 'retry', 'done']);
      expect(results[3]).toEqual(results[0]);
      expect(deliver.mock.calls).toHaveLength(6);
      expect(await deliveries.get('store-1', 'evt-1')).toMatchObject({
        status: 'dead_lettered',
        attempts: 6,
        deadAttempts: 6,
      });
    });

    it('tries the settle again after a 2xx instead of leaving the task to be called twice', async () => {
      const { deps, deliver, deliveries } = depsWith({ kind: 'ok', status: 200 });
      const settleDelivered = deliveries.settleDelivered.bind(deliveries);
      let failures = 2;
      deliveries.settleDelivered = async (settles) => {
        if (failures-- > 0) throw new Error('DynamoDB unavailable');
        return settleDelivered(settles);
      };
      const result = await deliverTask(deps, storeRecord(), policy, message());
      expect({
        result,
        calls: deliver.mock.calls.length,
        status: (await deliveries.get('store-1', 'evt-1'))?.status,
        version: await deliveries.deliveredVersion('store-1', 'A'),
      }).toEqual({ result: { kind: 'done', as: 'delivered' }, calls: 1, status: 'delivered', version: 3 });
    });

    it('gives up after three settle failures, leaving the task processing and its version marked', async () => {
      const { deps, deliveries } = depsWith({ kind: 'ok', status: 200 });
      deliveries.settleDelivered = async () => {
        throw new Error('DynamoDB unavailable');
      };
      await expect(deliverTask(deps, storeRecord(), policy, message())).rejects.toThrow(
        'DynamoDB unavailable',
      );
      expect({
        status: (await deliveries.get('store-1', 'evt-1'))?.status,
        version: await deliveries.deliveredVersion('store-1', 'A'),
      }).toEqual({ status: 'processing', version: 3 });
    });

    it('after a crash between the call and the settle, an older version is stale', async () => {
      // The crashed attempt's claim expired; the message came back. An older version must then be stale.
      const crashed = depsWith({ kind: 'ok', status: 200 }, { kind: 'ok', status: 200 });
      await crashed.deliveries.claim('store-1', 'evt-1', {
        holder: 'crashed',
        now: T0 - 60_000,
        until: T0 - 1,
        messageId: 'm1',
      });
      await deliverTask(crashed.deps, storeRecord(), policy, { ...message(), receiveCount: 2 });
      const older = await deliverTask(crashed.deps, storeRecord(), policy, {
        ...message(JSON.stringify({ ...work, eventId: 'evt-0', version: 2 })),
        messageId: 'm0',
      });
      expect({ older, calls: crashed.deliver.mock.calls.length }).toEqual({
        older: { kind: 'done', as: 'stale' },
        calls: 1,
      });
    });

    it('lets a claim outlast its call by the clock skew and more', () => {
      expect(CLAIM_MARGIN_MS).toBeGreaterThan(CLOCK_SKEW_MS);
    });
  });
});
