import type { SQSClient } from '@aws-sdk/client-sqs';
import { afterEach, describe, expect, it } from 'vitest';
import { DASHBOARD_HTML } from '../../../bin/local/dashboard-page.js';
import {
  emptyPerStoreRow,
  LocalMonitor,
  PER_STORE_MAX,
  PerStoreMeasures,
  type PerStoreRow,
} from '../../../bin/local/monitor.js';
import { RecordingTelemetry } from '../../../lambdas/adapters/recording-telemetry.js';
import { MetricNames } from '../../../lambdas/core/names.js';
import type { OperationsDeps } from '../../../lambdas/core/operations.js';

/** A RecordingTelemetry feeding a PerStoreMeasures, as LocalMonitor wires them. */
const measured = (maxStores?: number) => {
  const telemetry = new RecordingTelemetry();
  const measures = new PerStoreMeasures(maxStores);
  telemetry.subscribe((o) => measures.observe(o));
  return { telemetry, measures };
};

const row = (storeId: string, fields: Partial<Omit<PerStoreRow, 'storeId'>> = {}): PerStoreRow => ({
  ...emptyPerStoreRow(storeId),
  ...fields,
});

const republish = (telemetry: RecordingTelemetry, storeId: string, times: number): void => {
  const scope = telemetry.scoped({ storeId });
  for (let i = 0; i < times; i++) scope.count(MetricNames.attentionsPublished, 1, { reason: 'requeue' });
};

describe('PerStoreMeasures (the per-store measures table, locally)', () => {
  it('aggregates the six measures per store from scoped observations', () => {
    const { telemetry, measures } = measured();
    const s1 = telemetry.scoped({ storeId: 's1', tenantId: 't1', correlationId: 'c1' });
    s1.count(MetricNames.attentionsPublished, 1, { reason: 'requeue' });
    s1.count(MetricNames.attentionsPublished, 1, { reason: 'requeue' });
    s1.count(MetricNames.attentionsDiscarded, 1, { reason: 'stale' });
    s1.count(MetricNames.attentionsDiscarded, 1, { reason: 'over_limit' });
    s1.count(MetricNames.leaseBlocked, 1, { reason: 'over_limit' });
    s1.count(MetricNames.marketplaceThrottled);
    s1.count(MetricNames.marketplaceThrottled, 2);
    s1.timing(MetricNames.oldestTaskAge, 1200);
    s1.timing(MetricNames.oldestTaskAge, 800);
    s1.timing(MetricNames.timeToDrain, 300);
    s1.timing(MetricNames.timeToDrain, 4500);
    // A nested scope keeps the store id.
    const s2 = telemetry.scoped({ storeId: 's2' }).scoped({ correlationId: 'c2' });
    s2.count(MetricNames.attentionsPublished, 1, { reason: 'requeue' });
    s2.count(MetricNames.attentionsPublished, 1, { reason: 'requeue' });
    s2.count(MetricNames.attentionsPublished, 1, { reason: 'requeue' });
    s2.timing(MetricNames.oldestTaskAge, 0);

    expect(measures.top()).toEqual([
      row('s2', { republished: 3, oldestTaskMs: 0 }),
      row('s1', {
        republished: 2,
        discarded: 2,
        leaseBlocks: 1,
        rateLimited: 3,
        oldestTaskMs: 1200,
        maxDrainMs: 4500,
      }),
    ]);
  });

  it('ignores observations without a store id, other publish reasons and metrics that are not measures', () => {
    const { telemetry, measures } = measured();
    // Unscoped, and scoped without a store id (the reconciler's scope): not per store.
    telemetry.count(MetricNames.attentionsPublished, 1, { reason: 'requeue' });
    telemetry.count(MetricNames.attentionsDiscarded, 1, { reason: 'stale' });
    telemetry.timing(MetricNames.timeToDrain, 999);
    telemetry.scoped({ correlationId: 'sweep' }).count(MetricNames.leaseBlocked, 1, { reason: 'over_limit' });
    telemetry.scoped({ storeId: 42 }).count(MetricNames.attentionsDiscarded, 1, { reason: 'stale' });
    telemetry.scoped({ storeId: '' }).count(MetricNames.attentionsDiscarded, 1, { reason: 'stale' });
    // A store id, but not a republish (ingest's first signal) or not one of the measures.
    const s1 = telemetry.scoped({ storeId: 's1' });
    s1.count(MetricNames.attentionsPublished, 1, { reason: 'enqueue' });
    s1.count(MetricNames.attentionsPublished);
    s1.count(MetricNames.tasksAccepted, 5);
    s1.timing(MetricNames.marketplaceLatency, 50);
    expect(measures.top()).toEqual([]);
    expect(measures.size).toBe(0);

    s1.count(MetricNames.attentionsDiscarded, 1, { reason: 'paused' });
    expect(measures.top()).toEqual([row('s1', { discarded: 1 })]);
  });

  it('keeps the top 20 by republished attentions, then by store id', () => {
    const { telemetry, measures } = measured();
    // 25 stores: s00..s24 republish 0..24 times, and three more tie with s24.
    for (let i = 0; i < 25; i++) republish(telemetry, `s${String(i).padStart(2, '0')}`, i);
    for (const storeId of ['tie-b', 'tie-a', 'tie-c']) republish(telemetry, storeId, 24);
    // s00 republished nothing: a discard gives it a row (with 0 republished, ranked last).
    telemetry.scoped({ storeId: 's00' }).count(MetricNames.attentionsDiscarded, 1, { reason: 'stale' });

    const top = measures.top();
    expect(top).toHaveLength(20);
    expect(top.map((r) => r.storeId)).toEqual([
      's24',
      'tie-a',
      'tie-b',
      'tie-c',
      ...Array.from({ length: 16 }, (_, i) => `s${String(23 - i).padStart(2, '0')}`),
    ]);
    expect(top.map((r) => r.republished)).toEqual([
      24,
      24,
      24,
      24,
      ...Array.from({ length: 16 }, (_, i) => 23 - i),
    ]);
    expect(measures.size).toBe(28);
    expect(measures.top(100).at(-1)).toEqual(row('s00', { discarded: 1 }));
  });

  it('returns copies: a snapshot does not change as observations arrive', () => {
    const { telemetry, measures } = measured();
    republish(telemetry, 's1', 1);
    const before = measures.top();
    republish(telemetry, 's1', 1);
    expect(before).toEqual([row('s1', { republished: 1 })]);
    expect(measures.top()).toEqual([row('s1', { republished: 2 })]);
  });

  it('keeps at most maxStores stores, evicting the least recently seen', () => {
    const { telemetry, measures } = measured(3);
    republish(telemetry, 'a', 5);
    republish(telemetry, 'b', 4);
    republish(telemetry, 'c', 3);
    republish(telemetry, 'a', 1); // a is now the most recently seen; b the least
    republish(telemetry, 'd', 1);
    expect(measures.size).toBe(3);
    expect(measures.top().map((r) => [r.storeId, r.republished])).toEqual([
      ['a', 6],
      ['c', 3],
      ['d', 1],
    ]);
    // An evicted store that comes back starts from zero.
    republish(telemetry, 'b', 1);
    expect(measures.top().map((r) => [r.storeId, r.republished])).toEqual([
      ['a', 6],
      ['b', 1],
      ['d', 1],
    ]);
  });

  it('has a default bound of a few thousand stores, and rejects a bound below 1', () => {
    expect(PER_STORE_MAX).toBe(5000);
    const { telemetry, measures } = measured();
    for (let i = 0; i < PER_STORE_MAX + 10; i++) republish(telemetry, `s${i}`, 1);
    expect(measures.size).toBe(PER_STORE_MAX);
    expect(() => new PerStoreMeasures(0)).toThrow(/maxStores/);
  });
});

describe('LocalMonitor: perStore in /metrics', () => {
  let monitor: LocalMonitor | undefined;
  afterEach(() => monitor?.stop());

  it('serves the per-store rows in the snapshot and the /metrics route', () => {
    const telemetry = new RecordingTelemetry();
    // No emulators: store sampling fails and the snapshot keeps `stores: null`.
    const offline = { send: () => Promise.reject(new Error('offline')) } as unknown as SQSClient;
    monitor = new LocalMonitor(telemetry, {} as OperationsDeps, offline, ['http://offline/attention'], {
      sampleEveryMs: 60_000,
    });
    republish(telemetry, 'busy', 2);
    telemetry.scoped({ storeId: 'busy' }).timing(MetricNames.timeToDrain, 7000);
    telemetry.scoped({ storeId: 'quiet' }).count(MetricNames.marketplaceThrottled);
    telemetry.count(MetricNames.attentionsPublished, 1, { reason: 'requeue' }); // no store: not a row

    const expected = [row('busy', { republished: 2, maxDrainMs: 7000 }), row('quiet', { rateLimited: 1 })];
    expect(monitor.snapshot().perStore).toEqual(expected);
    expect((monitor.route('GET', '/metrics')?.body as { perStore: unknown }).perStore).toEqual(expected);
  });
});

describe('LocalMonitor: latency summaries in /metrics', () => {
  let monitor: LocalMonitor | undefined;
  afterEach(() => monitor?.stop());

  it('summarises the recent samples and counts every sample since start (`count` against `total`)', () => {
    const telemetry = new RecordingTelemetry();
    const offline = { send: () => Promise.reject(new Error('offline')) } as unknown as SQSClient;
    monitor = new LocalMonitor(telemetry, {} as OperationsDeps, offline, ['http://offline/attention'], {
      sampleEveryMs: 60_000,
    });
    // 12,000 samples: the first 10,000 ms long, the last 2,000 one millisecond; the summary keeps a recent window.
    for (let i = 0; i < 12_000; i++)
      telemetry.timing(MetricNames.marketplaceLatency, i < 10_000 ? 10_000 : 1);
    const summary = monitor.snapshot().latency[MetricNames.marketplaceLatency];
    expect(summary).toMatchObject({ count: 7_000, total: 12_000, p50: 10_000 });
  });
});

describe('dashboard page: per-store table', () => {
  it('has the per-store measures table, self-contained', () => {
    expect(DASHBOARD_HTML).toContain('Per-store measures (top 20 by republished attentions)');
    expect(DASHBOARD_HTML).toContain('id="per-store"');
    expect(DASHBOARD_HTML).not.toMatch(/<script[^>]+src=/);
    expect(DASHBOARD_HTML).not.toMatch(/<link[^>]+href=/);
  });
});
