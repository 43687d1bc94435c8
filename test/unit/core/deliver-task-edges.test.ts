import { describe, expect, it, vi } from 'vitest';
import { RecordingTelemetry } from '../../../lambdas/adapters/recording-telemetry.js';
import type { RateAnswer } from '../../../lambdas/core/adaptive-rate.js';
import {
  CLAIM_MARGIN_MS,
  DEFAULT_RETRY_AFTER_SECONDS,
  deliverTask,
  type DeliverDeps,
} from '../../../lambdas/core/deliver-task.js';
import { MetricNames } from '../../../lambdas/core/names.js';
import type {
  DeliveryOutcome,
  Marketplace,
  ReceivedMessage,
  TaskQueues,
} from '../../../lambdas/core/ports.js';
import { MemoryDeliveryLog } from '../../support/memory-delivery-log.js';
import { claimElsewhere, receivedTask, taskWork } from '../support/deliver-fixtures.js';
import { storeRecord, T0 } from '../support/fixtures.js';

// deliverTask's edges the outcome table does not reach: how long a claim lasts, what each settle records,
// what the adaptive rate is told, the settle retry's pacing, and the counters an operator reads.

const work = taskWork({ entityId: 'A', version: 3, correlationId: 'req-9' });
const policy = { maxAttempts: 3 };
const message = (body: unknown = work): ReceivedMessage => receivedTask(JSON.stringify(body));

const setup = (...outcomes: DeliveryOutcome[]) => {
  let now = T0;
  const sleeps: number[] = [];
  const deliver = vi.fn<Marketplace['deliver']>(async () => {
    now += 250; // the call takes a quarter second
    return outcomes.shift() ?? { kind: 'ok', status: 200 };
  });
  const deadLetter = vi.fn<TaskQueues['deadLetter']>(async () => undefined);
  const deliveries = new MemoryDeliveryLog();
  const logs: { level: string; message: string; fields?: Record<string, unknown> }[] = [];
  const telemetry = new RecordingTelemetry((record) => logs.push(record), 'info');
  const deps: DeliverDeps = {
    tasks: { deadLetter } as unknown as TaskQueues,
    marketplace: { deliver },
    deliveries,
    clock: {
      now: () => now,
      sleep: async (ms) => {
        sleeps.push(ms);
        now += ms;
      },
    },
    ids: { next: () => 'attempt-1' },
    telemetry,
    random: () => 0.5,
    settings: { marketplaceTimeoutMs: 5_000 },
  };
  return { deps, deliver, deadLetter, deliveries, telemetry, logs, sleeps };
};

describe('deliverTask at its edges', () => {
  it('claims the task until the call deadline plus the marketplace timeout and the margin', async () => {
    const { deps, deliveries } = setup();
    const claim = vi.spyOn(deliveries, 'claim');
    await deliverTask(deps, storeRecord(), policy, message(), async () => true, T0 + 30_000);
    expect(claim.mock.calls[0]?.[2]).toEqual({
      holder: 'attempt-1',
      messageId: 'm1',
      now: T0,
      until: T0 + 30_000 + 5_000 + CLAIM_MARGIN_MS,
    });
  });

  it('claims from now when the call deadline has already passed', async () => {
    const { deps, deliveries } = setup();
    const claim = vi.spyOn(deliveries, 'claim');
    await deliverTask(deps, storeRecord(), policy, message(), async () => true, T0 - 30_000);
    expect(claim.mock.calls[0]?.[2].until).toBe(T0 + 5_000 + CLAIM_MARGIN_MS);
  });

  it('backs a held duplicate off for at least a second, rounded up', async () => {
    const { deps, deliveries } = setup();
    await claimElsewhere(deliveries, T0 + 1_200);
    const late = await deliverTask(deps, storeRecord(), policy, message());
    await claimElsewhere(deliveries, T0 + 10, 'evt-2');
    const soon = await deliverTask(deps, storeRecord(), policy, message({ ...work, eventId: 'evt-2' }));
    expect({ late, soon }).toEqual({
      late: { kind: 'retry', afterSeconds: 2 },
      soon: { kind: 'retry', afterSeconds: 1 },
    });
  });

  it('counts a duplicate it does not call', async () => {
    const { deps, telemetry } = setup();
    await deliverTask(deps, storeRecord(), policy, message());
    await deliverTask(deps, storeRecord(), policy, message());
    expect({
      duplicates: telemetry.total(MetricNames.tasksDuplicate),
      delivered: telemetry.total(MetricNames.tasksDelivered),
    }).toEqual({ duplicates: 1, delivered: 1 });
  });

  it('settles a stale task with the versions in its error, no attempt counted, and counts it', async () => {
    const { deps, deliveries, telemetry } = setup();
    deliveries.raiseVersion('store-1', 'A', 5);
    await deliverTask(deps, storeRecord(), policy, message());
    const record = await deliveries.get('store-1', 'evt-1');
    expect({
      status: record?.status,
      lastError: record?.lastError,
      attempts: record?.attempts,
      stale: telemetry.total(MetricNames.tasksStale),
    }).toEqual({
      status: 'stale',
      lastError: 'version 3 is older than version 5, already sent',
      attempts: undefined,
      stale: 1,
    });
  });

  it('releases the claim of a task the rate did not let start, counting no attempt', async () => {
    const { deps, deliveries } = setup();
    await deliverTask(deps, storeRecord(), policy, message(), async () => false);
    const record = await deliveries.get('store-1', 'evt-1');
    expect({ status: record?.status, attempts: record?.attempts, holder: record?.holder }).toEqual({
      status: 'pending',
      attempts: undefined,
      holder: undefined,
    });
  });

  it('tells the adaptive rate each answer: throttled or not (with its Retry-After), when the call started, and the limit heard', async () => {
    const { deps } = setup(
      { kind: 'ok', status: 200, limit: { perSecond: 4 } },
      {
        kind: 'throttled',
        status: 429,
      },
    );
    const answers: RateAnswer[] = [];
    const observe = async (answer: RateAnswer) => void answers.push(answer);
    await deliverTask(deps, storeRecord(), policy, message(), undefined, undefined, observe);
    await deliverTask(
      deps,
      storeRecord(),
      policy,
      message({ ...work, eventId: 'e2', entityId: 'B' }),
      undefined,
      undefined,
      observe,
    );
    expect(answers).toEqual([
      { throttled: false, startedAt: T0, limit: { perSecond: 4 } },
      // No Retry-After header: the default, as the slice honours it.
      { throttled: true, retryAfterSeconds: DEFAULT_RETRY_AFTER_SECONDS, startedAt: T0 + 250 },
    ]);
  });

  it('settles the outcome when the adaptive rate fails to record the answer, and warns', async () => {
    const { deps, deliveries, logs } = setup();
    const result = await deliverTask(
      deps,
      storeRecord(),
      policy,
      message(),
      undefined,
      undefined,
      async () => {
        throw new Error('DynamoDB unavailable');
      },
    );
    expect({
      result,
      status: (await deliveries.get('store-1', 'evt-1'))?.status,
      warned: logs.filter((l) => l.level === 'warn').map((l) => [l.message, l.fields?.['error']]),
    }).toEqual({
      result: { kind: 'done', as: 'delivered' },
      status: 'delivered',
      warned: [['rate not observed', 'Error: DynamoDB unavailable']],
    });
  });

  it('records the marketplace latency of the call', async () => {
    const { deps, telemetry } = setup();
    await deliverTask(deps, storeRecord(), policy, message());
    expect(telemetry.timings.get(MetricNames.marketplaceLatency)).toEqual([250]);
  });

  it('waits longer before each settle retry after a 2xx (a failed request, then an unprocessed item)', async () => {
    const { deps, deliveries, sleeps } = setup();
    const settleDelivered = deliveries.settleDelivered.bind(deliveries);
    const answers: ('throw' | 'unprocessed')[] = ['throw', 'unprocessed'];
    deliveries.settleDelivered = async (settles) => {
      const answer = answers.shift();
      if (answer === 'throw') throw new Error('DynamoDB unavailable');
      if (answer === 'unprocessed') return settles;
      return settleDelivered(settles);
    };
    await deliverTask(deps, storeRecord(), policy, message());
    expect({ sleeps, status: (await deliveries.get('store-1', 'evt-1'))?.status }).toEqual({
      sleeps: [200, 400],
      status: 'delivered',
    });
  });

  it('records a 2xx delivered even when its claim was taken over during the call, and counts it', async () => {
    const { deps, deliveries, telemetry } = setup();
    const claim = deliveries.claim.bind(deliveries);
    deliveries.claim = async (...args) => {
      const granted = await claim(...args);
      // Another attempt takes the task over once this claim has expired (the call outlived it).
      await claim('store-1', 'evt-1', { ...args[2], holder: 'other', now: args[2].until + 1 });
      return granted;
    };
    const result = await deliverTask(deps, storeRecord(), policy, message());
    const record = await deliveries.get('store-1', 'evt-1');
    expect({
      result,
      status: record?.status,
      holder: record?.holder,
      delivered: telemetry.total(MetricNames.tasksDelivered),
    }).toEqual({
      result: { kind: 'done', as: 'delivered' },
      status: 'delivered',
      holder: undefined,
      delivered: 1,
    });
  });

  it('releases a throttled task with the 429 recorded, and counts the throttle', async () => {
    const { deps, deliveries, telemetry } = setup({ kind: 'throttled', status: 429 });
    await deliverTask(deps, storeRecord(), policy, message());
    expect({
      record: await deliveries.get('store-1', 'evt-1'),
      throttled: telemetry.total(MetricNames.marketplaceThrottled),
    }).toMatchObject({
      record: { status: 'pending', lastError: 'throttled (429)', lastStatus: 429 },
      throttled: 1,
    });
  });

  it('records a transient failure’s error and status, counted by status class (network when none)', async () => {
    const { deps, deliveries, telemetry } = setup(
      { kind: 'transient', status: 503, error: 'marketplace answered 503' },
      { kind: 'transient', error: 'connection reset' },
    );
    await deliverTask(deps, storeRecord(), policy, message());
    const first = await deliveries.get('store-1', 'evt-1');
    await deliverTask(deps, storeRecord(), policy, message({ ...work, eventId: 'evt-2', entityId: 'B' }));
    const second = await deliveries.get('store-1', 'evt-2');
    expect({
      first: [first?.status, first?.lastError, first?.lastStatus, first?.attempts],
      second: [second?.status, second?.lastError, second?.lastStatus, second?.attempts],
      x5: telemetry.total(MetricNames.tasksFailed, { statusClass: '5xx' }),
      network: telemetry.total(MetricNames.tasksFailed, { statusClass: 'network' }),
    }).toEqual({
      first: ['pending', 'marketplace answered 503', 503, 1],
      second: ['pending', 'connection reset', undefined, 1],
      x5: 1,
      network: 1,
    });
  });

  it('dead-letters a network failure on the last attempt without a status', async () => {
    const { deps, deadLetter } = setup({ kind: 'transient', error: 'connection reset' });
    await deliverTask(deps, storeRecord(), { maxAttempts: 1 }, message());
    expect(deadLetter.mock.calls[0]?.[2]).toEqual({
      code: 'retries_exhausted',
      message: 'connection reset',
      attempts: 1,
      firstAttemptAt: T0,
      lastAttemptAt: T0,
    });
  });

  it('dead-letters to the store’s DLQ with the message body, counts it by code, and logs the task’s correlation id', async () => {
    const { deps, deadLetter, telemetry, logs } = setup({ kind: 'permanent', status: 422, error: 'bad sku' });
    await deliverTask(deps, storeRecord(), policy, message());
    expect({
      to: deadLetter.mock.calls[0]?.[0],
      body: deadLetter.mock.calls[0]?.[1],
      counted: telemetry.total(MetricNames.tasksDeadLettered, { code: 'marketplace_rejected' }),
      log: logs.filter((l) => l.level === 'warn').map((l) => [l.message, l.fields]),
    }).toEqual({
      to: storeRecord().deadLetterQueueUrl,
      body: JSON.stringify(work),
      counted: 1,
      log: [
        [
          'task dead-lettered',
          {
            eventId: 'evt-1',
            correlationId: 'req-9',
            code: 'marketplace_rejected',
            message: 'bad sku',
            lastStatus: 422,
          },
        ],
      ],
    });
  });

  it('dead-letters at the receive limit without counting an attempt and without a status it never heard', async () => {
    const { deps, deadLetter, deliveries } = setup();
    const result = await deliverTask(deps, storeRecord(), policy, { ...message(), receiveCount: 1_000 });
    const record = await deliveries.get('store-1', 'evt-1');
    expect({
      result,
      reason: deadLetter.mock.calls[0]?.[2],
      attempts: record?.attempts,
      status: record?.status,
    }).toEqual({
      result: { kind: 'done', as: 'dead_lettered' },
      reason: {
        code: 'receive_limit',
        message: 'received 1000 times without an outcome',
        attempts: 0,
        firstAttemptAt: T0,
        lastAttemptAt: T0,
      },
      attempts: undefined,
      status: 'dead_lettered',
    });
  });
});
