import { z } from 'zod';
import { existingStore, readStoreView, type AdminDeps } from './admin.js';
import { ConflictError, ValidationError } from './errors.js';
import { json, parseJsonBody, storeIdOf, validate, type HttpRequest, type HttpResponse } from './http.js';
import { ACTIVE_SHARDS, MetricNames } from './names.js';
import type { ActiveEntry, ActiveStoreIndex } from './ports.js';
import { workQueuesOf } from './store-queues.js';

/** Operator use cases (issue #4): the backlog listing, the controlled discard, per-store measures. */
export interface OperationsDeps extends AdminDeps {
  activeIndex: ActiveStoreIndex;
}

export const BACKLOG_PAGE = { default: 20, max: 50 } as const;

/** Where the next page starts: after this (oldestAt, storeId), the listing's total order. */
const CursorSchema = z.object({ s: z.number(), id: z.string() });
type Cursor = z.infer<typeof CursorSchema>;
const encodeCursor = (entry: ActiveEntry): string =>
  Buffer.from(JSON.stringify({ s: entry.oldestAt, id: entry.storeId } satisfies Cursor)).toString(
    'base64url',
  );
const decodeCursor = (raw: string): Cursor => {
  try {
    return CursorSchema.parse(JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')));
  } catch {
    throw new ValidationError('cursor: not a cursor this route returned');
  }
};

export const BacklogQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(BACKLOG_PAGE.max).default(BACKLOG_PAGE.default),
  cursor: z.string().min(1).optional(),
});

const byAge = (a: ActiveEntry, b: ActiveEntry): number =>
  a.oldestAt - b.oldestAt || (a.storeId < b.storeId ? -1 : a.storeId > b.storeId ? 1 : 0);

/**
 * One shard's entries after `after`, at most `want` of them: pages through DynamoDB until it has them
 * or the shard ends (ties on oldestAt are skipped by storeId, so no entry is listed twice).
 */
const shardEntries = async (
  index: ActiveStoreIndex,
  shard: string,
  after: Cursor | undefined,
  want: number,
): Promise<ActiveEntry[]> => {
  const isAfter = (e: ActiveEntry): boolean =>
    after === undefined || e.oldestAt > after.s || (e.oldestAt === after.s && e.storeId > after.id);
  const found: ActiveEntry[] = [];
  let cursor: string | undefined;
  do {
    const page = await index.byOldest(shard, {
      from: after?.s ?? 0,
      limit: want,
      ...(cursor ? { cursor } : {}),
    });
    for (const entry of page.entries) if (isAfter(entry) && !entry.storeId.startsWith('#')) found.push(entry);
    cursor = page.cursor;
  } while (found.length < want && cursor !== undefined);
  return found.slice(0, want);
};

/**
 * `GET /admin/backlog?limit&cursor`: stores that are not idle, oldest task first (the estimate the store view
 * shows as `queue.oldestAgeSeconds`). Each of the 16 shards of the sparse `active` index is read in that
 * order and the shards are merged; one more entry than the
 * page is read per shard to know whether a next page exists. Idle stores cost nothing here (invariant 8).
 */
export const listBacklog = async (deps: OperationsDeps, request: HttpRequest): Promise<HttpResponse> => {
  const query = validate(BacklogQuery, request.query ?? {}, ['query']);
  const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
  const shards = Array.from({ length: ACTIVE_SHARDS }, (_, i) => String(i));
  const merged = (
    await Promise.all(shards.map((shard) => shardEntries(deps.activeIndex, shard, after, query.limit + 1)))
  )
    .flat()
    .sort(byAge);
  const page = merged.slice(0, query.limit);
  const now = deps.clock.now();
  const stores = (
    await Promise.all(
      page.map(async (entry) => {
        const store = await deps.stores.get(entry.storeId);
        if (!store) return undefined; // a dispatch item whose store was deleted: nothing to operate on
        const { view, dispatch } = await readStoreView(deps, store);
        const since = dispatch?.activeSince ?? entry.oldestAt;
        return {
          ...view,
          activeSince: new Date(since).toISOString(),
          busySeconds: Math.max(0, Math.round((now - since) / 1000)),
        };
      }),
    )
  ).filter((view) => view !== undefined);
  const last = page[page.length - 1];
  return json(200, {
    stores,
    ...(merged.length > query.limit && last ? { cursor: encodeCursor(last) } : {}),
  });
};

export const PurgeBody = z.strictObject({
  /** Must repeat the store id: a purge discards every task of the store and cannot be undone. */
  confirm: z.string(),
  reason: z.string().max(500).optional(),
});

/**
 * `POST /admin/stores/{storeId}/queue/purge` body `{"confirm": "<storeId>", "reason"?}`: the controlled
 * discard. Deletes every message of the store's work queue (not its DLQ), counted (StorePurges,
 * TasksPurged = the approximate count just before) and logged at warn with who asked and why.
 */
export const purgeStoreQueue = async (deps: OperationsDeps, request: HttpRequest): Promise<HttpResponse> => {
  const storeId = storeIdOf(request);
  const body = validate(PurgeBody, parseJsonBody(request, 4 * 1024));
  if (body.confirm !== storeId) {
    throw new ValidationError(
      `confirm: must equal the store id (${storeId}) to discard every task in its queue`,
    );
  }
  const store = await existingStore(deps, storeId);
  // The work queues' visible + in-flight + delayed count just before: one request per work queue (the high
  // one too; the DLQ is not purged). Both queues are purged; SQS refuses a second purge within 60 s.
  let discarded = 0;
  let inProgress = false;
  for (const url of workQueuesOf(store)) {
    discarded += await deps.queues.pending(url);
    if ((await deps.queues.purge(url)) === 'in_progress') inProgress = true;
  }
  if (inProgress) {
    throw new ConflictError('purge_in_progress', `a purge of ${storeId} is still running; retry in 60 s`);
  }
  deps.telemetry.count(MetricNames.storePurges);
  deps.telemetry.count(MetricNames.tasksPurged, discarded);
  deps.telemetry.warn('store queue purged', {
    storeId,
    tenantId: store.tenantId,
    discarded,
    reason: body.reason,
    caller: request.caller ?? 'unknown',
  });
  return json(202, { storeId, discarded, status: 'purged' });
};

const isoOrNull = (ms: number | undefined): string | null =>
  ms === undefined ? null : new Date(ms).toISOString();

/**
 * `GET /admin/stores/{storeId}/measures`: the contract's store view plus the six measures of the pattern,
 * per store: backlog and oldest age (SQS), attentions republished and discarded, lease and rate-limit
 * blocks, and time to drain — the counters are kept on the store's dispatch item by writes the protocol
 * makes anyway (cumulative since the store was created), so reading them costs one GetItem.
 */
export const storeMeasures = async (deps: OperationsDeps, request: HttpRequest): Promise<HttpResponse> => {
  const store = await existingStore(deps, storeIdOf(request));
  const { view, dispatch } = await readStoreView(deps, store);
  const now = deps.clock.now();
  const since = dispatch?.activeSince;
  return json(200, {
    ...view,
    measures: {
      backlog: view.queue.backlog + view.queue.inFlight + view.queue.delayed,
      oldestAgeSeconds: view.queue.oldestAgeSeconds,
      deadLetters: view.queue.deadLetters,
      activeSince: isoOrNull(since),
      /** Time spent draining so far: the store has been busy since activeSince (time to drain, in progress). */
      drainingSeconds: since === undefined ? 0 : Math.max(0, Math.round((now - since) / 1000)),
      /** The last completed drain: signalled → idle. */
      lastDrainSeconds: dispatch?.lastDrainMs === undefined ? null : Math.round(dispatch.lastDrainMs / 1000),
      lastIdleAt: isoOrNull(dispatch?.lastIdleAt),
      attentions: {
        /** Re-published by a worker after a slice because backlog remained (round-robin turns). */
        republished: dispatch?.nRepublished ?? 0,
        /** Re-published by the reconciler because one looked lost. */
        resent: dispatch?.nResent ?? 0,
        /** Discarded: store paused/maintenance/disabled, over its limit, duplicate or coalesced. */
        discarded: dispatch?.nDiscarded ?? 0,
      },
      blocks: {
        /** Attentions refused a lease because the store held more slots than its concurrency limit. */
        lease: dispatch?.nLeaseBlocked ?? 0,
        /** Slices stopped by a marketplace 429 (the store's slot waits for Retry-After). */
        rateLimit: dispatch?.nThrottled ?? 0,
      },
    },
  });
};
