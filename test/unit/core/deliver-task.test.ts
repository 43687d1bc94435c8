import { describe, expect, it, vi } from 'vitest';
import { RecordingTelemetry } from '../../../lambdas/adapters/recording-telemetry.js';
import {
  backoffSeconds,
  deliverTask,
  DEFAULT_RETRY_AFTER_SECONDS,
  type DeliverDeps,
} from '../../../lambdas/core/deliver-task.js';
import type { WorkMessage } from '../../../lambdas/core/messages.js';
import { MAX_DELIVERY_ATTEMPTS } from '../../../lambdas/core/plans.js';
import type {
  DeliveryLog,
  DeliveryOutcome,
  DeliveryStatus,
  Marketplace,
  ReceivedMessage,
  TaskQueues,
} from '../../../lambdas/core/ports.js';
import { MAX_DELAY_SECONDS } from '../../../lambdas/core/timing.js';
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
  const work: WorkMessage = {
    v: 1,
    storeId: 'store-1',
    eventId: 'evt-1',
    type: 'inventory.update',
    payload: { sku: 'A', quantity: 1 },
    entityId: 'A',
    version: 3,
    acceptedAt: T0,
  };
  const message = (receiveCount = 1, body = JSON.stringify(work)): ReceivedMessage => ({
    messageId: 'm1',
    receiptHandle: 'rh1',
    body,
    receiveCount,
    sentAt: T0,
  });

  const depsWith = (outcome: DeliveryOutcome, previous?: DeliveryStatus) => {
    const deliver = vi.fn<Marketplace['deliver']>(async () => outcome);
    const record = vi.fn<DeliveryLog['record']>(async () => undefined);
    const deadLetter = vi.fn<TaskQueues['deadLetter']>(async () => undefined);
    const deps: DeliverDeps = {
      tasks: { deadLetter } as unknown as TaskQueues,
      marketplace: { deliver },
      deliveries: {
        get: async () =>
          previous ? { storeId: 'store-1', eventId: 'evt-1', status: previous, updatedAt: T0 } : undefined,
        record,
      },
      clock: fixedClock(),
      telemetry: new RecordingTelemetry(),
      random: () => 0.5,
    };
    return { deps, deliver, record, deadLetter };
  };

  it('sends the marketplace the contract’s body with entityId and version', async () => {
    const { deps, deliver } = depsWith({ kind: 'ok', status: 200 });
    await deliverTask(deps, storeRecord(), message());
    expect(deliver.mock.calls[0]?.[0].body).toEqual({
      eventId: 'evt-1',
      type: 'inventory.update',
      payload: { sku: 'A', quantity: 1 },
      entityId: 'A',
      version: 3,
    });
  });

  it.each<[DeliveryStatus, number]>([
    ['delivered', 0],
    ['stale', 0],
    ['pending', 1],
    ['processing', 1],
    ['dead_lettered', 1],
  ])('with a previous %s record calls the marketplace %d times', async (previous, calls) => {
    const { deps, deliver } = depsWith({ kind: 'ok', status: 200 }, previous);
    await deliverTask(deps, storeRecord(), message());
    expect(deliver).toHaveBeenCalledTimes(calls);
  });

  it.each<[DeliveryOutcome, number, unknown]>([
    [{ kind: 'ok', status: 200 }, 1, { kind: 'done', as: 'delivered' }],
    [{ kind: 'throttled', status: 429, retryAfterSeconds: 30 }, 1, { kind: 'throttled', afterSeconds: 30 }],
    [{ kind: 'throttled', status: 429 }, 1, { kind: 'throttled', afterSeconds: DEFAULT_RETRY_AFTER_SECONDS }],
    [{ kind: 'throttled', status: 429, retryAfterSeconds: 0 }, 1, { kind: 'throttled', afterSeconds: 1 }],
    [
      { kind: 'throttled', status: 429, retryAfterSeconds: 5_000 },
      1,
      { kind: 'throttled', afterSeconds: 900 },
    ],
    [{ kind: 'transient', status: 503, error: 'x' }, 3, { kind: 'retry', afterSeconds: 4 }],
    [{ kind: 'transient', error: 'timed out' }, 1, { kind: 'retry', afterSeconds: 1 }],
    [
      { kind: 'transient', status: 503, error: 'x' },
      MAX_DELIVERY_ATTEMPTS,
      { kind: 'done', as: 'dead_lettered' },
    ],
    [{ kind: 'permanent', status: 422, error: 'x' }, 1, { kind: 'done', as: 'dead_lettered' }],
  ])('turns %j on receive %d into %j', async (outcome, receiveCount, result) => {
    const { deps } = depsWith(outcome);
    await expect(deliverTask(deps, storeRecord(), message(receiveCount))).resolves.toEqual(result);
  });

  it('dead-letters a message that is not a task without calling the marketplace', async () => {
    const { deps, deliver, deadLetter } = depsWith({ kind: 'ok', status: 200 });
    await deliverTask(deps, storeRecord(), message(1, '{"not":"a task"}'));
    expect({ calls: deliver.mock.calls.length, reason: deadLetter.mock.calls[0]?.[2] }).toEqual({
      calls: 0,
      reason: { code: 'invalid_message', message: 'not a valid task message', attempts: 1 },
    });
  });

  it('dead-letters a task addressed to another store', async () => {
    const { deps, deliver } = depsWith({ kind: 'ok', status: 200 });
    const result = await deliverTask(
      deps,
      storeRecord(),
      message(1, JSON.stringify({ ...work, storeId: 'store-2' })),
    );
    expect({ result, calls: deliver.mock.calls.length }).toEqual({
      result: { kind: 'done', as: 'dead_lettered' },
      calls: 0,
    });
  });

  it('records why a task was dead-lettered', async () => {
    const { deps, record } = depsWith({ kind: 'permanent', status: 422, error: 'marketplace answered 422' });
    await deliverTask(deps, storeRecord(), message(2));
    expect(record.mock.calls[0]?.[0]).toEqual({
      storeId: 'store-1',
      eventId: 'evt-1',
      status: 'dead_lettered',
      attempts: 2,
      lastError: 'marketplace_rejected: marketplace answered 422',
      updatedAt: T0,
    });
  });
});
