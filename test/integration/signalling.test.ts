import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { DynamoDispatchState } from '../../lambdas/adapters/dynamo-dispatch-state.js';
import { activeShardOf, INDEX_BACKFILL_CURSOR_ID, MetricNames } from '../../lambdas/core/names.js';
import { inventoryTasks, sleep, startTestStack, waitFor, type TestStack } from '../support/harness.js';
import { drainAttentionQueues, queueDepth } from '../support/queues.js';

/** Invariants 7 (bounded signalling) and 2 (no stranded backlog), through the HTTP API on the emulators. */
describe('signalling', () => {
  let t: TestStack;
  let token: string;
  const fast = { ratePerSecond: 1000 };

  beforeAll(async () => {
    // The reconciler runs only when a test says so: a timer would re-announce the burst's attention while
    // the workers are stopped (by design), which is not what the burst test counts.
    t = await startTestStack({ workerPoolSize: 4, reconcileIntervalMs: 3_600_000 });
    token = await t.tokenFor('acme');
  });
  afterAll(async () => {
    await t?.stop();
  });

  it('creates at most a handful of attentions for a burst of 1,000 tasks to one idle store', async () => {
    await t.createStore('burst', { tenantId: 'acme', marketplace: 'amazon', plan: 'basic', overrides: fast });
    await t.stack.stopWorkers();
    // A basic store: its attentions travel on the `low` level's queue.
    const before = await queueDepth(t.stack.clients.sqs, t.stack.resources.attentionQueueUrls.low);
    // 500 single-task requests, 20 at a time, and 5 batches of 100: ingest's own worst case for races.
    const singles = inventoryTasks('burst-single', 500);
    for (let i = 0; i < singles.length; i += 20) {
      const answers = await Promise.all(
        singles
          .slice(i, i + 20)
          .map((task) => t.request('POST', '/v1/stores/burst/tasks', { token, body: task })),
      );
      expect(answers.every((a) => a.status === 202)).toBe(true);
    }
    await t.submitMany('burst', token, inventoryTasks('burst-batch', 500));
    const after = await queueDepth(t.stack.clients.sqs, t.stack.resources.attentionQueueUrls.low);
    const attentions = after.visible + after.delayed - (before.visible + before.delayed);
    expect(attentions).toBeLessThanOrEqual(3);
    expect(attentions).toBeGreaterThanOrEqual(1);
    t.stack.startWorkers();
    await waitFor('the burst is delivered', () => t.deliveredCount('burst') >= 1000, 90_000);
  });

  it('drains a store whose every attention message was lost, through the reconciler, whatever its level', async () => {
    await t.createStore('lost', { tenantId: 'acme', marketplace: 'amazon', plan: 'basic', overrides: fast });
    // Same plan, raised to `high` by an override: its attentions travel on another queue.
    await t.createStore('lost-high', {
      tenantId: 'acme',
      marketplace: 'amazon',
      plan: 'basic',
      overrides: { ...fast, priority: 'high' },
    });
    await t.stack.stopWorkers();
    await t.submitMany('lost', token, inventoryTasks('lost', 30));
    await t.submitMany('lost-high', token, inventoryTasks('lost-high', 30));
    const removed = await drainAttentionQueues(t.stack.clients.sqs, t.stack.resources.attentionQueueUrls);
    expect(removed.filter((m) => m.storeId.startsWith('lost')).map((m) => [m.storeId, m.priority])).toEqual(
      expect.arrayContaining([
        ['lost', 'low'],
        ['lost-high', 'high'],
      ]),
    );
    const resendsBefore = t.stack.telemetry.total(MetricNames.reconcilerRepairs, { kind: 'resend' });
    t.stack.startWorkers();
    await sleep(500);
    expect(t.deliveredCount('lost') + t.deliveredCount('lost-high')).toBe(0);
    await waitFor(
      'the lost store is drained by reconciler runs',
      async () => {
        await t.stack.reconcileNow();
        return t.deliveredCount('lost') >= 30 && t.deliveredCount('lost-high') >= 30;
      },
      30_000,
    );
    expect(t.stack.telemetry.total(MetricNames.reconcilerRepairs, { kind: 'resend' })).toBeGreaterThan(
      resendsBefore,
    );
  });

  it('finds a store the code before f267a90 marked active (in no index) and drains it in one reconciler run: the index backfill', async () => {
    await t.createStore('legacy', {
      tenantId: 'acme',
      marketplace: 'amazon',
      plan: 'basic',
      overrides: fast,
    });
    await t.stack.stopWorkers();
    await t.submitMany('legacy', token, inventoryTasks('legacy', 10));
    await drainAttentionQueues(t.stack.clients.sqs, t.stack.resources.attentionQueueUrls);
    // As the older code and an upgrade leave it: marked active with activeShard alone (its index's sort key was
    // activeSince), its announcement lost, and no backfill run yet (the older reconciler wrote no cursor).
    const table = t.stack.resources.tables.dispatch;
    await t.stack.clients.doc.send(
      new UpdateCommand({
        TableName: table,
        Key: { storeId: 'legacy' },
        UpdateExpression: 'REMOVE headSentAt SET slots = :none',
        ExpressionAttributeValues: { ':none': {} },
      }),
    );
    const dispatch = new DynamoDispatchState(t.stack.clients.doc, table);
    await dispatch.writeCursor(INDEX_BACKFILL_CURSOR_ID, undefined);
    const listed = async () => {
      const ids: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await dispatch.listActive(activeShardOf('legacy'), cursor, 100);
        ids.push(...page.storeIds);
        cursor = page.cursor;
      } while (cursor);
      return ids.includes('legacy');
    };
    const before = await listed();
    t.stack.startWorkers();
    const report = await t.stack.reconcileNow();
    expect({
      before,
      after: await listed(),
      backfill: report.repairs.backfill,
      sweep: report.repairs.sweep,
      // A pass that began with the first run: the next runs read the table again while older code may run.
      state: Object.keys(JSON.parse((await dispatch.readCursor(INDEX_BACKFILL_CURSOR_ID)) ?? '{}') as object),
    }).toEqual({ before: false, after: true, backfill: 1, sweep: 0, state: ['since', 'pass'] });
    await waitFor('the legacy store is drained', () => t.deliveredCount('legacy') >= 10, 30_000);
  });
});
