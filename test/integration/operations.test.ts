import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MetricNames } from '../../lambdas/core/names.js';
import type { MetricsSnapshot } from '../../bin/local/monitor.js';
import { inventoryTasks, startTestStack, waitFor, type TestStack } from '../support/harness.js';

interface ListedStore {
  storeId: string;
  queue: { backlog: number; inFlight: number; delayed: number };
  busySeconds: number;
}

/** The operator routes of issue #4 through local mode: backlog listing, controlled discard, measures, /metrics. */
describe('operator routes (local mode)', () => {
  let t: TestStack;
  let token: string;

  beforeAll(async () => {
    t = await startTestStack();
    token = await t.tokenFor('acme');
    for (const storeId of ['older', 'newer', 'idle'])
      await t.createStore(storeId, { tenantId: 'acme', marketplace: 'amazon', plan: 'basic' });
    // No worker runs: the backlogs stay put while the routes look at them.
    await t.stack.stopWorkers();
    await t.submitMany('older', token, inventoryTasks('o', 30));
    await new Promise((r) => setTimeout(r, 1_100)); // activeSince has millisecond precision; make the order certain
    await t.submitMany('newer', token, inventoryTasks('n', 5));
  });
  afterAll(async () => {
    await t?.stop();
  });

  it('lists the busy stores, oldest task first, and not the idle one', async () => {
    const res = await t.admin<{ stores: ListedStore[]; cursor?: string }>('GET', '/admin/backlog');
    expect({
      status: res.status,
      stores: res.body.stores.map((s) => [s.storeId, s.queue.backlog]),
      cursor: res.body.cursor,
    }).toEqual({
      status: 200,
      stores: [
        ['older', 30],
        ['newer', 5],
      ],
      cursor: undefined,
    });
  });

  it('pages the listing with the cursor it returns', async () => {
    const first = await t.admin<{ stores: ListedStore[]; cursor?: string }>('GET', '/admin/backlog?limit=1');
    const second = await t.admin<{ stores: ListedStore[]; cursor?: string }>(
      'GET',
      `/admin/backlog?limit=1&cursor=${encodeURIComponent(first.body.cursor ?? '')}`,
    );
    expect([
      first.body.stores.map((s) => s.storeId),
      second.body.stores.map((s) => s.storeId),
      second.body.cursor,
    ]).toEqual([['older'], ['newer'], undefined]);
  });

  it('reports the measures of one store', async () => {
    const res = await t.admin<{ measures: Record<string, unknown> }>('GET', '/admin/stores/older/measures');
    expect(res.body.measures).toMatchObject({ backlog: 30, deadLetters: 0 });
  });

  it('refuses a purge without the confirmation and keeps the tasks', async () => {
    const res = await t.admin('POST', '/admin/stores/older/queue/purge', { confirm: 'yes' });
    const view = await t.admin<{ queue: { backlog: number } }>('GET', '/admin/stores/older');
    expect([res.status, view.body.queue.backlog]).toEqual([400, 30]);
  });

  it('purges a store’s queue when confirmed, counted', async () => {
    const res = await t.admin('POST', '/admin/stores/older/queue/purge', {
      confirm: 'older',
      reason: 'test discard',
    });
    const view = await t.admin<{ queue: { backlog: number } }>('GET', '/admin/stores/older');
    expect({
      status: res.status,
      body: res.body,
      backlog: view.body.queue.backlog,
      purged: t.stack.telemetry.total(MetricNames.tasksPurged),
    }).toEqual({
      status: 202,
      body: { storeId: 'older', discarded: 30, status: 'purged' },
      backlog: 0,
      purged: 30,
    });
  });

  it('leaves the other stores’ tasks alone and delivers them', async () => {
    t.stack.startWorkers();
    await waitFor('newer is drained', () => t.deliveredCount('newer') >= 5, 30_000);
    expect([t.deliveredCount('newer'), t.deliveredCount('older')]).toEqual([5, 0]);
  });

  it('drops the drained stores from the listing once they go idle', async () => {
    await waitFor(
      'no busy store left',
      async () =>
        (await t.admin<{ stores: ListedStore[] }>('GET', '/admin/backlog')).body.stores.length === 0,
      30_000,
    );
  });

  it('keeps the pattern’s per-store measures on the store’s dispatch item (DynamoDB Local)', async () => {
    // Two tasks per slice: five tasks take three turns, two of them re-published attentions; the third hands its
    // slot to the confirm queue (not a turn: not counted), whose slice marks the store idle.
    await t.createStore('measured', {
      tenantId: 'acme',
      marketplace: 'amazon',
      plan: 'basic',
      overrides: { maxMessagesPerSlice: 2 },
    });
    // Queued while no worker runs, so the turns are exactly 2 + 2 + 1 (no task trickles into a slice).
    await t.stack.stopWorkers();
    await t.submitMany('measured', token, inventoryTasks('m', 5));
    t.stack.startWorkers();
    type Measures = {
      attentions: { republished: number; resent: number; discarded: number };
      blocks: { lease: number; rateLimit: number };
      lastDrainSeconds: number | null;
      lastIdleAt: string | null;
    };
    const measures = async () =>
      (await t.admin<{ measures: Measures }>('GET', '/admin/stores/measured/measures')).body.measures;
    await waitFor(
      'measured drains and goes idle',
      async () => (await measures()).lastIdleAt !== null,
      30_000,
    );
    const drained = await measures();

    // A paused store's pending attention is discarded, and counted against the store.
    await t.stack.stopWorkers();
    await t.submitMany('measured', token, inventoryTasks('p', 1));
    await t.admin('PATCH', '/admin/stores/measured', { status: 'paused' });
    t.stack.startWorkers();
    await waitFor(
      'the paused store’s attention is discarded',
      async () => (await measures()).attentions.discarded >= 1,
      30_000,
    );
    expect({
      delivered: t.deliveredCount('measured'),
      republished: drained.attentions.republished,
      discardedBefore: drained.attentions.discarded,
      blocks: drained.blocks,
      drainMeasured: typeof drained.lastDrainSeconds === 'number',
      discardedAfter: (await measures()).attentions.discarded,
    }).toEqual({
      delivered: 5,
      republished: 2,
      discardedBefore: 0,
      blocks: { lease: 0, rateLimit: 0 },
      drainMeasured: true,
      discardedAfter: 1,
    });
  });

  it('serves GET /metrics with the counters the EMF records carry', async () => {
    const res = await fetch(`${t.stack.url}/metrics`);
    const body = (await res.json()) as MetricsSnapshot;
    expect({
      accepted: body.counters[MetricNames.tasksAccepted],
      delivered: body.counters[MetricNames.tasksDelivered],
      purges: body.counters[MetricNames.storePurges],
      seriesOfDeliveries: (body.series.counts[MetricNames.tasksDelivered] ?? []).reduce((a, b) => a + b, 0),
    }).toEqual({ accepted: 41, delivered: 10, purges: 1, seriesOfDeliveries: 10 });
  });

  it('serves GET /dashboard as a self-contained HTML page', async () => {
    const res = await fetch(`${t.stack.url}/dashboard`);
    const html = await res.text();
    expect({
      status: res.status,
      type: res.headers.get('content-type'),
      fetchesMetrics: html.includes("fetch('/metrics'"),
      external: /<(script|link)[^>]+(src|href)=["']?https?:/i.test(html),
    }).toEqual({ status: 200, type: 'text/html; charset=utf-8', fetchesMetrics: true, external: false });
  });
});
