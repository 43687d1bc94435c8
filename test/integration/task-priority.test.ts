import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import type { StoreRecord } from '../../lambdas/core/store-model.js';
import { queueDepth } from '../support/queues.js';
import { startTestStack, waitFor, type TestStack } from '../support/harness.js';

/**
 * Task priority within a store (contract, "Scheduling policy"): a store's high tasks accepted while normal
 * ones wait are delivered before those, within one slice — through the HTTP API and the real handlers on
 * DynamoDB Local and fauxqs. Ordering only, no timing.
 */
const catalog = (prefix: string, count: number) =>
  Array.from({ length: count }, (_, i) => ({
    eventId: `${prefix}-${i}`,
    type: 'catalog.update',
    payload: { sku: `SKU-${i}`, title: `Item ${i}` },
  }));
const order = (eventId: string) => ({ eventId, type: 'orders.sync', payload: { orderId: eventId } });
const SLICE = 50;

describe('task priority within a store', () => {
  let t: TestStack;
  let token: string;
  const store = (id: string, overrides: Record<string, unknown> = {}) =>
    t.createStore(id, {
      tenantId: 'acme',
      marketplace: 'amazon',
      plan: 'basic',
      overrides: { maxMessagesPerSlice: SLICE, ratePerSecond: 100, ...overrides },
    });
  const submit = (storeId: string, task: Record<string, unknown>) =>
    t.request('POST', `/v1/stores/${storeId}/tasks`, { token, body: task });
  /** The eventIds of the store's calls, in the order they started. */
  const callOrder = (storeId: string): string[] =>
    t.marketplace.calls
      .filter((c) => c.storeId === storeId)
      .sort((a, b) => a.startedAt - b.startedAt)
      .map((c) => (c.body as { eventId: string }).eventId);
  /** Writes a store record as an older deployment left it (straight to the table, no revision check). */
  const writeRecord = (record: StoreRecord) =>
    t.stack.clients.doc.send(new PutCommand({ TableName: t.stack.resources.tables.stores, Item: record }));

  beforeAll(async () => {
    t = await startTestStack();
    token = await t.tokenFor('acme');
  });
  afterAll(async () => {
    await t?.stop();
  });

  it('delivers an order sync accepted behind 300 waiting catalog updates first', async () => {
    await store('waiting');
    await t.admin('PATCH', '/admin/stores/waiting', { status: 'paused' });
    await t.submitMany('waiting', token, catalog('cat', 300));
    expect((await submit('waiting', order('ord-1'))).status).toBe(202);
    // The store view counts both of its work queues.
    const view = await t.admin<{ queue: { backlog: number } }>('GET', '/admin/stores/waiting');
    expect(view.body.queue.backlog).toBe(301);
    await t.admin('PATCH', '/admin/stores/waiting', { status: 'active' });
    await waitFor('the order sync delivered', () => callOrder('waiting').includes('ord-1'), 30_000);
    expect(callOrder('waiting')[0]).toBe('ord-1');
  });

  it('lets at most one slice of the waiting normal tasks go before a high task accepted mid-drain', async () => {
    await store('draining', { ratePerSecond: 50 });
    await t.submitMany('draining', token, catalog('drain', 300));
    await waitFor('the drain under way', () => t.deliveredCount('draining') >= 20, 30_000);
    expect((await submit('draining', order('ord-2'))).status).toBe(202);
    const startedBefore = callOrder('draining').length;
    await waitFor('the order sync delivered', () => callOrder('draining').includes('ord-2'), 30_000);
    const overtaken = callOrder('draining').indexOf('ord-2') - startedBefore;
    // Only the batches in hand when it was accepted (≤ 10 per consumer) may go first; never a whole slice.
    expect(overtaken).toBeLessThanOrEqual(SLICE);
  });

  it('gives a store created before task priority its high queue on its next PATCH', async () => {
    await store('legacy');
    const record = await t.storeRecord('legacy');
    const { priorityQueueUrl: highQueue, ...before } = record!;
    await writeRecord(before);
    await t.admin('PATCH', '/admin/stores/legacy', { status: 'paused' });
    const after = await t.storeRecord('legacy');
    expect(after?.priorityQueueUrl).toBe(highQueue);
    await submit('legacy', order('ord-3'));
    const high = await queueDepth(t.stack.clients.sqs, highQueue ?? '');
    expect(high.visible).toBe(1);
    // Paused before the high queue existed: the same PATCH created it, so nothing went to the work queue.
    const work = await queueDepth(t.stack.clients.sqs, after?.queueUrl ?? '');
    expect(work.visible + work.inFlight + work.delayed).toBe(0);
  });

  it('sends a high task of a store without a high queue to its work queue', async () => {
    await store('old');
    const { priorityQueueUrl: _high, ...legacy } = (await t.storeRecord('old'))!;
    await writeRecord({ ...legacy, status: 'paused' });
    await submit('old', order('ord-4'));
    expect(await t.backlogOf('old')).toBe(1);
  });

  it('purges both work queues of a store', async () => {
    await store('purged');
    await t.admin('PATCH', '/admin/stores/purged', { status: 'paused' });
    await t.submitMany('purged', token, [...catalog('p', 5), order('ord-5')]);
    const res = await t.admin<{ discarded: number }>('POST', '/admin/stores/purged/queue/purge', {
      confirm: 'purged',
    });
    expect(res.status).toBe(202);
    const view = await t.admin<{ queue: { backlog: number } }>('GET', '/admin/stores/purged');
    expect({ discarded: res.body.discarded, backlog: view.body.queue.backlog }).toEqual({
      discarded: 6,
      backlog: 0,
    });
  });
});
