import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SQSEvent } from 'aws-lambda';
import { DynamoDispatchState } from '../../lambdas/adapters/dynamo-dispatch-state.js';
import { RecordingTelemetry } from '../../lambdas/adapters/recording-telemetry.js';
import { createWorkerHandler } from '../../lambdas/app/worker-app.js';
import { HttpMarketplace } from '../../lambdas/adapters/http-marketplace.js';
import { EnvNames } from '../../lambdas/config/env-names.js';
import { loadConfig } from '../../lambdas/config/runtime-config.js';
import type { DeliveryOutcome } from '../../lambdas/core/ports.js';
import { MetricNames } from '../../lambdas/core/names.js';
import { inventoryTasks, startTestStack, waitFor, type TestStack } from '../support/harness.js';
import { drainAttentionQueues } from '../support/queues.js';

/**
 * Invariant 1 through a crash: a worker stops mid-slice holding the lease and in-flight messages.
 * After the lease and visibility timeouts the reconciler reclaims the slot and every task is delivered.
 */
describe('crashed worker', () => {
  let t: TestStack;
  let zombie: Promise<unknown>;
  let releaseZombie: (outcome: DeliveryOutcome) => void = () => undefined;
  let zombieFence = -1;
  const zombieTelemetry = new RecordingTelemetry();
  const STORE = 'crashy';
  const AFTER = 'crashy-after';
  const dispatch = () => new DynamoDispatchState(t.stack.clients.doc, t.stack.resources.tables.dispatch);

  beforeAll(async () => {
    t = await startTestStack({ reconcileIntervalMs: 1_000 });
    // A short slice keeps the lease (slice + call timeout + margin) near 14 s.
    await t.createStore(STORE, {
      tenantId: 'acme',
      marketplace: 'amazon',
      plan: 'basic',
      overrides: { ratePerSecond: 1000, maxSliceSeconds: 2 },
    });
    await t.createStore(AFTER, {
      tenantId: 'acme',
      marketplace: 'amazon',
      plan: 'basic',
      overrides: { ratePerSecond: 1000, maxSliceSeconds: 2 },
    });
    const token = await t.tokenFor('acme');
    await t.stack.stopWorkers();
    await t.submitMany(STORE, token, inventoryTasks('crash', 20));
    await t.submitMany(AFTER, token, inventoryTasks('after', 5));
    const attentions = await drainAttentionQueues(t.stack.clients.sqs, t.stack.resources.attentionQueueUrls);
    const attention = attentions.find((a) => a.storeId === STORE);
    const afterAttention = attentions.find((a) => a.storeId === AFTER);
    if (!attention || !afterAttention) throw new Error('no attention was published');

    // The crashing worker: same handler and emulators, but its marketplace call never returns.
    const crashing = createWorkerHandler(loadConfig('worker', t.stack.env), {
      clients: t.stack.clients,
      telemetry: zombieTelemetry,
      marketplace: { deliver: () => new Promise<DeliveryOutcome>((resolve) => (releaseZombie = resolve)) },
    });
    const event: SQSEvent = {
      Records: [
        {
          messageId: 'zombie',
          receiptHandle: 'r',
          body: JSON.stringify(attention),
          attributes: {} as never,
          messageAttributes: {},
          md5OfBody: '',
          eventSource: 'aws:sqs',
          eventSourceARN: 'arn',
          awsRegion: 'us-east-1',
        },
      ],
    };
    zombie = crashing(event);

    // The second crashes right after the marketplace applied its first call: before settling or deleting.
    const real = new HttpMarketplace(t.stack.env[EnvNames.marketplaceBaseUrl] as string, 2_000);
    const crashingAfter = createWorkerHandler(loadConfig('worker', t.stack.env), {
      clients: t.stack.clients,
      telemetry: new RecordingTelemetry(),
      marketplace: {
        deliver: async (request) => {
          await real.deliver(request);
          return new Promise<DeliveryOutcome>(() => undefined);
        },
      },
    });
    void crashingAfter({
      Records: [{ ...event.Records[0]!, messageId: 'zombie-after', body: JSON.stringify(afterAttention) }],
    });
  });
  afterAll(async () => {
    releaseZombie({ kind: 'transient', error: 'released' });
    await zombie?.catch(() => undefined);
    await t?.stop();
  });

  it('holds the lease and in-flight messages while it hangs', async () => {
    await waitFor(
      'the crashing worker holds a lease',
      async () => {
        const item = await dispatch().read(STORE);
        const lease = Object.values(item?.slots ?? {}).find((slot) => slot.s === 'l');
        if (lease?.s === 'l') zombieFence = lease.f;
        return lease !== undefined;
      },
      10_000,
    );
    const store = await t.admin<{ queue: { inFlight: number } }>('GET', `/admin/stores/${STORE}`);
    expect(store.body.queue.inFlight).toBeGreaterThan(0);
    expect(t.deliveredCount(STORE)).toBe(0);
  });

  it('delivers every task after the lease and visibility timeouts, each exactly once', async () => {
    t.stack.startWorkers();
    await waitFor('all 20 tasks delivered', () => t.deliveredCount(STORE) >= 20, 60_000);
    const keys = t.marketplace.calls
      .filter((c) => c.storeId === STORE && c.status < 300)
      .map((c) => c.idempotencyKey);
    expect(new Set(keys).size).toBe(20);
    expect(
      t.stack.telemetry.total(MetricNames.reconcilerRepairs, { kind: 'reclaim' }),
    ).toBeGreaterThanOrEqual(1);
  });

  it('fences the zombie when it wakes up: it re-signals nothing and delivers nothing more', async () => {
    releaseZombie({ kind: 'transient', error: 'released' });
    await zombie;
    expect(zombieTelemetry.total(MetricNames.attentionsPublished)).toBe(0);
    const item = await dispatch().read(STORE);
    expect(Object.values(item?.slots ?? {}).some((slot) => slot.s === 'l' && slot.f === zombieFence)).toBe(
      false,
    );
    await waitFor('the store queue is empty', async () => (await t.backlogOf(STORE)) === 0, 30_000);
    expect(t.deliveredCount(STORE)).toBe(20);
  });

  it('recovers a worker that crashed after the effect but before settling: one effect, every task delivered', async () => {
    const keys = [0, 1, 2, 3, 4].map((i) => `${AFTER}:after-${i}`);
    // Every task answered 2xx, and the crashed one twice: five 2xx alone can be the crashed attempt's, its
    // retry's and three others', one task still on its way (a race this wait used to lose under load).
    const successes = (): number[] => keys.map((k) => t.marketplace.successes.get(k) ?? 0);
    await waitFor(
      'all 5 tasks of the second store delivered, the crashed one again',
      () => successes().every((n) => n >= 1) && successes().reduce((a, b) => a + b, 0) >= 6,
      60_000,
    );
    // The crashed attempt's claim expired; the retry called again with the same Idempotency-Key.
    expect(keys.map((k) => t.marketplace.successes.get(k)).sort()).toEqual([1, 1, 1, 1, 2]);
    expect(keys.map((k) => t.marketplace.effects.get(k))).toEqual([1, 1, 1, 1, 1]);
  });
});
