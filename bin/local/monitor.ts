import { GetQueueAttributesCommand, type QueueAttributeName, type SQSClient } from '@aws-sdk/client-sqs';
import type { MetricObservation, RecordingTelemetry } from '../../lambdas/adapters/recording-telemetry.js';
import { RecordingTelemetry as Keys } from '../../lambdas/adapters/recording-telemetry.js';
import { MetricNames } from '../../lambdas/core/names.js';
import { listBacklog, type OperationsDeps } from '../../lambdas/core/operations.js';
import { DASHBOARD_HTML } from './dashboard-page.js';

/** One store as the top-stores tables show it. */
export interface StoreRow {
  storeId: string;
  tenantId: string;
  plan: string;
  status: string;
  backlog: number;
  inFlight: number;
  delayed: number;
  deadLetters: number;
  oldestAgeSeconds: number;
  activeConsumers: number;
  busySeconds: number;
  /** The adaptive rate: effective calls per second and why (policy, header, backoff). */
  rate?: { configured: number; effective: number; reason: string };
}

export interface StoresSnapshot {
  sampledAt: number;
  /** Stores that are not idle (capped at the listing's page: `activeCapped` says so). */
  active: number;
  activeCapped: boolean;
  /** Pending tasks (visible + in flight + delayed) across the listed stores. */
  backlog: number;
  deadLetters: number;
  byBacklog: StoreRow[];
  byAge: StoreRow[];
  attentionQueue: { visible: number; inFlight: number; delayed: number };
}

/**
 * One store as the per-store measures table shows it (the local mirror of the CloudWatch dashboard's
 * Logs Insights table, `PerStoreLogQueries.measures`): totals and maxima since the monitor started.
 */
export interface PerStoreRow {
  storeId: string;
  /** AttentionsPublished with reason `requeue`: the store's attention went back on the queue. */
  republished: number;
  /** Sum of AttentionsDiscarded (every reason). */
  discarded: number;
  /** Sum of LeaseBlocked. */
  leaseBlocks: number;
  /** Sum of MarketplaceThrottled (rate-limited marketplace calls). */
  rateLimited: number;
  /** Max OldestTaskAge (ms); null until one is observed (Logs Insights shows an empty cell). */
  oldestTaskMs: number | null;
  /** Max TimeToDrain (ms); null until one is observed. */
  maxDrainMs: number | null;
}

export interface LatencySummary {
  /** The samples the percentiles summarise: all of them up to 10,000, then the most recent 5,000 to 10,000. */
  count: number;
  /** Every sample since start. */
  total: number;
  p50: number;
  p90: number;
  p99: number;
}

/** The JSON of `GET /metrics`: the counters and timings the EMF records carry, per second, plus the stores. */
export interface MetricsSnapshot {
  at: number;
  startedAt: number;
  /** Totals since start, keyed like RecordingTelemetry (`Name` and `Name{dim=value}`). */
  counters: Record<string, number>;
  /** Per-second series of the last `windowSeconds`: `t` (epoch s) and, per counter key, its increments. */
  series: { t: number[]; counts: Record<string, number[]>; latency: Record<string, (number | null)[]> };
  latency: Record<string, LatencySummary>;
  stores: StoresSnapshot | null;
  /** The top 20 stores by republished attentions (then by store id), from the scoped worker metrics. */
  perStore: PerStoreRow[];
}

const TOP = 20;
const LISTED = 50;
/** Per-store measures keep at most this many stores (about 1 MB); the least recently seen goes first. */
export const PER_STORE_MAX = 5000;

/** A store's row before any of its measures arrived. */
export const emptyPerStoreRow = (storeId: string): PerStoreRow => ({
  storeId,
  republished: 0,
  discarded: 0,
  leaseBlocks: 0,
  rateLimited: 0,
  oldestTaskMs: null,
  maxDrainMs: null,
});

/**
 * Per-store measures from metric observations that carry `properties.storeId` (the worker scopes every
 * attention). Only the six measured metrics create or refresh a row: they are all worker metrics, as the
 * CloudWatch table reads the worker's logs only, and a request's path (any store id, even an unknown one)
 * cannot fill the map. Memory is bounded: past `maxStores` the store seen least recently is evicted (its
 * totals are lost; if it comes back it starts again from zero).
 */
export class PerStoreMeasures {
  /** Insertion order is recency: each observation moves its store to the end. */
  private readonly rows = new Map<string, PerStoreRow>();

  constructor(private readonly maxStores = PER_STORE_MAX) {
    if (!Number.isInteger(maxStores) || maxStores < 1)
      throw new Error('maxStores must be a positive integer');
  }

  get size(): number {
    return this.rows.size;
  }

  observe(o: MetricObservation): void {
    const storeId = o.properties?.['storeId'];
    if (typeof storeId !== 'string' || storeId === '') return;
    const apply = measureOf(o);
    if (!apply) return;
    const row = this.rows.get(storeId) ?? emptyPerStoreRow(storeId);
    this.rows.delete(storeId);
    apply(row, o.value);
    this.rows.set(storeId, row);
    if (this.rows.size > this.maxStores) {
      const leastRecent = this.rows.keys().next();
      if (!leastRecent.done) this.rows.delete(leastRecent.value);
    }
  }

  /** The first `n` stores by republished attentions (descending), then by store id; copies. */
  top(n = TOP): PerStoreRow[] {
    return [...this.rows.values()]
      .sort(
        (x, y) =>
          y.republished - x.republished || (x.storeId < y.storeId ? -1 : x.storeId > y.storeId ? 1 : 0),
      )
      .slice(0, n)
      .map((row) => ({ ...row }));
  }
}

const max = (current: number | null, value: number): number =>
  current === null ? value : Math.max(current, value);

/** How one observation changes a store's row, or undefined when it is not one of the measures. */
const measureOf = (o: MetricObservation): ((row: PerStoreRow, value: number) => void) | undefined => {
  switch (o.name) {
    case MetricNames.attentionsPublished:
      // A slice's next turn (`recheck`: one that keeps its empty decision); not a hand-off to the confirm queue.
      return o.dimensions?.['reason'] === 'requeue' || o.dimensions?.['reason'] === 'recheck'
        ? (r, v) => (r.republished += v)
        : undefined;
    case MetricNames.attentionsDiscarded:
      return (r, v) => (r.discarded += v);
    case MetricNames.leaseBlocked:
      return (r, v) => (r.leaseBlocks += v);
    case MetricNames.marketplaceThrottled:
      return (r, v) => (r.rateLimited += v);
    case MetricNames.oldestTaskAge:
      return (r, v) => (r.oldestTaskMs = max(r.oldestTaskMs, v));
    case MetricNames.timeToDrain:
      return (r, v) => (r.maxDrainMs = max(r.maxDrainMs, v));
    default:
      return undefined;
  }
};

const percentile = (sorted: number[], p: number): number =>
  sorted.length === 0 ? 0 : (sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0);

/**
 * Local mode's CloudWatch: buckets every metric RecordingTelemetry sees (the same names and dimensions
 * the EMF records carry) into one-second bins, keeps the last few minutes, and samples the busy stores
 * (the operator listing: the active index + queue counts) for the top-stores tables, and keeps the per-store
 * measures of the scoped worker metrics (PerStoreMeasures) for the per-store table. Store sampling runs
 * only while someone looks (a /metrics request in the last 30 s), so tests that never ask pay nothing.
 */
export class LocalMonitor {
  private readonly startedAt = Date.now();
  private readonly bins = new Map<number, { counts: Map<string, number>; latency: Map<string, number[]> }>();
  private readonly latencyAll = new Map<string, number[]>();
  private readonly latencyTotal = new Map<string, number>();
  private readonly perStore: PerStoreMeasures;
  private readonly unsubscribe: () => void;
  private stores: StoresSnapshot | null = null;
  private lastAsked = 0;
  private sampling: Promise<void> | undefined;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly telemetry: RecordingTelemetry,
    private readonly deps: OperationsDeps,
    private readonly sqs: SQSClient,
    /** Every level's attention queue: the page shows their sum. */
    private readonly attentionQueueUrls: readonly string[],
    private readonly opts: { windowSeconds?: number; sampleEveryMs?: number; maxStores?: number } = {},
  ) {
    this.perStore = new PerStoreMeasures(opts.maxStores);
    this.unsubscribe = telemetry.subscribe((o) => this.observe(o));
    this.timer = setInterval(() => {
      this.prune();
      if (Date.now() - this.lastAsked < 30_000) void this.sampleStores();
    }, opts.sampleEveryMs ?? 2000);
    this.timer.unref();
  }

  private get windowSeconds(): number {
    return this.opts.windowSeconds ?? 300;
  }

  private observe(o: MetricObservation): void {
    this.perStore.observe(o);
    const second = Math.floor(Date.now() / 1000);
    let bin = this.bins.get(second);
    if (!bin) {
      bin = { counts: new Map(), latency: new Map() };
      this.bins.set(second, bin);
    }
    const key = Keys.key(o.name, o.dimensions);
    if (o.kind === 'count') {
      bin.counts.set(key, (bin.counts.get(key) ?? 0) + o.value);
      if (o.dimensions) bin.counts.set(o.name, (bin.counts.get(o.name) ?? 0) + o.value);
      return;
    }
    for (const k of o.dimensions ? [key, o.name] : [key]) {
      const list = bin.latency.get(k) ?? [];
      list.push(o.value);
      bin.latency.set(k, list);
      const all = this.latencyAll.get(k) ?? [];
      if (all.length >= 10_000) all.splice(0, 5_000); // a recent window is what the page shows
      all.push(o.value);
      this.latencyAll.set(k, all);
      this.latencyTotal.set(k, (this.latencyTotal.get(k) ?? 0) + 1);
    }
  }

  private prune(): void {
    const oldest = Math.floor(Date.now() / 1000) - this.windowSeconds;
    for (const second of this.bins.keys()) if (second < oldest) this.bins.delete(second);
  }

  /** Reads the busy stores and the attention queue once (never two reads at a time). */
  sampleStores(): Promise<void> {
    this.sampling ??= this.readStores()
      .then((snapshot) => {
        this.stores = snapshot;
      })
      .catch(() => undefined) // the emulators are stopping, or busy: keep the last snapshot
      .finally(() => {
        this.sampling = undefined;
      });
    return this.sampling;
  }

  private async readStores(): Promise<StoresSnapshot> {
    const [listing, attention] = await Promise.all([
      listBacklog(this.deps, {
        method: 'GET',
        resource: '/admin/backlog',
        pathParameters: {},
        query: { limit: String(LISTED) },
        headers: {},
        body: undefined,
        requestId: 'local-monitor',
      }),
      Promise.all(
        this.attentionQueueUrls.map((QueueUrl) =>
          this.sqs.send(
            new GetQueueAttributesCommand({
              QueueUrl,
              AttributeNames: [
                'ApproximateNumberOfMessages',
                'ApproximateNumberOfMessagesNotVisible',
                'ApproximateNumberOfMessagesDelayed',
              ],
            }),
          ),
        ),
      ),
    ]);
    const body = listing.body as {
      stores: (Omit<StoreRow, 'backlog' | 'inFlight' | 'delayed' | 'deadLetters' | 'oldestAgeSeconds'> & {
        queue: {
          backlog: number;
          inFlight: number;
          delayed: number;
          deadLetters: number;
          oldestAgeSeconds: number;
        };
      })[];
      cursor?: string;
    };
    const rows: StoreRow[] = body.stores.map((s) => ({
      storeId: s.storeId,
      tenantId: s.tenantId,
      plan: s.plan,
      status: s.status,
      backlog: s.queue.backlog,
      inFlight: s.queue.inFlight,
      delayed: s.queue.delayed,
      deadLetters: s.queue.deadLetters,
      oldestAgeSeconds: s.queue.oldestAgeSeconds,
      activeConsumers: s.activeConsumers,
      busySeconds: s.busySeconds,
      ...(s.rate ? { rate: s.rate } : {}),
    }));
    const pending = (r: StoreRow) => r.backlog + r.inFlight + r.delayed;
    const sum = (name: QueueAttributeName): number =>
      attention.reduce((total, out) => total + Number(out.Attributes?.[name] ?? '0'), 0);
    return {
      sampledAt: Date.now(),
      active: rows.length,
      activeCapped: body.cursor !== undefined,
      backlog: rows.reduce((sum, r) => sum + pending(r), 0),
      deadLetters: rows.reduce((sum, r) => sum + r.deadLetters, 0),
      byBacklog: [...rows].sort((x, y) => pending(y) - pending(x)).slice(0, TOP),
      byAge: [...rows].sort((x, y) => y.oldestAgeSeconds - x.oldestAgeSeconds).slice(0, TOP),
      attentionQueue: {
        visible: sum('ApproximateNumberOfMessages'),
        inFlight: sum('ApproximateNumberOfMessagesNotVisible'),
        delayed: sum('ApproximateNumberOfMessagesDelayed'),
      },
    };
  }

  /** Per-second increments of one counter key over the last `seconds` (for the status line). */
  ratePerSecond(key: string, seconds = 5): number {
    const now = Math.floor(Date.now() / 1000);
    let sum = 0;
    for (let s = now - seconds; s < now; s++) sum += this.bins.get(s)?.counts.get(key) ?? 0;
    return sum / seconds;
  }

  /** The latest store sample, taking one when asked (the status line asks every few seconds). */
  latestStores(): StoresSnapshot | null {
    this.lastAsked = Date.now();
    return this.stores;
  }

  snapshot(): MetricsSnapshot {
    this.lastAsked = Date.now();
    if (this.stores === null) void this.sampleStores();
    const now = Math.floor(Date.now() / 1000);
    const t: number[] = [];
    const counts: Record<string, number[]> = {};
    const latency: Record<string, (number | null)[]> = {};
    const countKeys = new Set<string>();
    const latencyKeys = new Set<string>();
    for (const bin of this.bins.values()) {
      for (const k of bin.counts.keys()) countKeys.add(k);
      for (const k of bin.latency.keys()) latencyKeys.add(k);
    }
    for (const k of countKeys) counts[k] = [];
    for (const k of latencyKeys) for (const p of ['p50', 'p90', 'p99']) latency[`${k} ${p}`] = [];
    // From the last `windowSeconds`, or from start-up if that is more recent (no empty run-in on the charts).
    const from = Math.max(now - this.windowSeconds + 1, Math.floor(this.startedAt / 1000));
    for (let s = from; s <= now; s++) {
      t.push(s);
      const bin = this.bins.get(s);
      for (const k of countKeys) counts[k]?.push(bin?.counts.get(k) ?? 0);
      for (const k of latencyKeys) {
        const sorted = [...(bin?.latency.get(k) ?? [])].sort((x, y) => x - y);
        for (const p of [50, 90, 99])
          latency[`${k} p${p}`]?.push(sorted.length === 0 ? null : percentile(sorted, p));
      }
    }
    const summary: Record<string, LatencySummary> = {};
    for (const [k, values] of this.latencyAll) {
      const sorted = [...values].sort((x, y) => x - y);
      summary[k] = {
        count: values.length,
        total: this.latencyTotal.get(k) ?? values.length,
        p50: percentile(sorted, 50),
        p90: percentile(sorted, 90),
        p99: percentile(sorted, 99),
      };
    }
    return {
      at: Date.now(),
      startedAt: this.startedAt,
      counters: Object.fromEntries(this.telemetry.counters),
      series: { t, counts, latency },
      latency: summary,
      stores: this.stores,
      perStore: this.perStore.top(TOP),
    };
  }

  /** The api-server `extra` hook: `GET /metrics` (JSON) and `GET /dashboard` (HTML). */
  route(
    method: string,
    path: string,
  ): { status: number; body: unknown; headers?: Record<string, string> } | undefined {
    if (method !== 'GET') return undefined;
    if (path === '/metrics')
      return { status: 200, body: this.snapshot(), headers: { 'cache-control': 'no-store' } };
    if (path === '/dashboard' || path === '/dashboard/')
      return {
        status: 200,
        body: DASHBOARD_HTML,
        headers: { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' },
      };
    return undefined;
  }

  stop(): void {
    clearInterval(this.timer);
    this.unsubscribe();
  }
}
