/**
 * The deployable shape, as data: functions, tables, the attention queue, the event source and the
 * reconciler's schedule. The CDK constructs build resources from it, local mode creates the same
 * tables and queues and wires the same handlers from it, and a test checks both against the
 * synthesized template. No CDK or AWS SDK import here.
 */
import { MAX_RECEIVE_COUNT } from '../core/plans.js';
import { Tables } from '../core/names.js';
import { attentionVisibilitySeconds, INGEST_TIMEOUT_SECONDS, workerTimeoutSeconds } from '../core/timing.js';
import { FunctionEnv, type FunctionName } from './runtime-config.js';

export interface FunctionSpec {
  /** Source file under lambdas/handlers, exporting `handler`. */
  entry: string;
  /** Powertools service name (logs, the `service` metric dimension); the stack sets POWERTOOLS_SERVICE_NAME to it. */
  serviceName: string;
  timeoutSeconds: number;
  memoryMb: number;
  env: readonly string[];
}

export const FUNCTIONS: Readonly<Record<FunctionName, FunctionSpec>> = {
  ingest: {
    entry: 'lambdas/handlers/ingest.ts',
    serviceName: 'ingest',
    timeoutSeconds: INGEST_TIMEOUT_SECONDS,
    memoryMb: 512,
    env: FunctionEnv.ingest,
  },
  admin: {
    entry: 'lambdas/handlers/admin.ts',
    serviceName: 'admin',
    // Under API Gateway's 29 s integration timeout (the stack checks it): an admin request never answers
    // 504 while it keeps working. Long work (the bulk usage-key backfill) is paged within this budget.
    timeoutSeconds: 25,
    memoryMb: 256,
    env: FunctionEnv.admin,
  },
  authorizer: {
    entry: 'lambdas/handlers/authorizer.ts',
    serviceName: 'authorizer',
    timeoutSeconds: 5,
    memoryMb: 256,
    env: FunctionEnv.authorizer,
  },
  worker: {
    entry: 'lambdas/handlers/attention-worker.ts',
    serviceName: 'attention-worker',
    timeoutSeconds: workerTimeoutSeconds(),
    memoryMb: 512,
    env: FunctionEnv.worker,
  },
  reconciler: {
    entry: 'lambdas/handlers/reconciler.ts',
    serviceName: 'reconciler',
    timeoutSeconds: 300,
    memoryMb: 256,
    env: FunctionEnv.reconciler,
  },
};

export type KeyType = 'S' | 'N';
export interface TableSpec {
  partitionKey: { name: string; type: KeyType };
  ttlAttribute?: string;
  globalIndexes: {
    name: string;
    partitionKey: { name: string; type: KeyType };
    sortKey?: { name: string; type: KeyType };
    projection: 'KEYS_ONLY' | 'ALL';
  }[];
}

export const TABLES: Readonly<Record<keyof typeof Tables, TableSpec>> = {
  stores: { partitionKey: { name: Tables.stores.partitionKey, type: 'S' }, globalIndexes: [] },
  dispatch: {
    partitionKey: { name: Tables.dispatch.partitionKey, type: 'S' },
    globalIndexes: [
      {
        // Sparse: only stores that are not idle carry activeShard. KEYS_ONLY so per-task enqSeq bumps never write to it.
        name: Tables.dispatch.activeIndex,
        partitionKey: { name: Tables.dispatch.activeIndexPartitionKey, type: 'S' },
        sortKey: { name: Tables.dispatch.activeIndexSortKey, type: 'N' },
        projection: 'KEYS_ONLY',
      },
    ],
  },
  tokens: {
    partitionKey: { name: Tables.tokens.partitionKey, type: 'S' },
    globalIndexes: [
      {
        name: Tables.tokens.tenantIndex,
        partitionKey: { name: Tables.tokens.tenantIndexPartitionKey, type: 'S' },
        projection: 'ALL',
      },
    ],
  },
  deliveries: {
    partitionKey: { name: Tables.deliveries.partitionKey, type: 'S' },
    ttlAttribute: Tables.deliveries.ttlAttribute,
    globalIndexes: [],
  },
};

export const ATTENTION_QUEUE = {
  visibilityTimeoutSeconds: attentionVisibilitySeconds(FUNCTIONS.worker.timeoutSeconds),
  /** An attention that fails this often is a poison message: kept for inspection, repaired by the reconciler. */
  maxReceiveCount: 5,
  retentionSeconds: 4 * 24 * 3600,
  deadLetterRetentionSeconds: 14 * 24 * 3600,
} as const;

export const STORE_QUEUE = {
  maxReceiveCount: MAX_RECEIVE_COUNT,
  /**
   * As long as SQS keeps anything (14 days): SQS deletes older messages silently, and a paused store's
   * backlog, or a task stuck behind a broken store, must outlive every recovery path by as much as it can.
   */
  retentionSeconds: 14 * 24 * 3600,
  deadLetterRetentionSeconds: 14 * 24 * 3600,
  /** Default visibility; the worker sets its own per receive (lease-bound). */
  visibilityTimeoutSeconds: 30,
} as const;

export const WORKER_EVENT_SOURCE = {
  /**
   * Attentions per invocation (issue #11). The invocation runs their slices concurrently (Powertools'
   * batch processor, in parallel), so one worker — one unit of MaximumConcurrency — holds up to this many
   * slices, and the end-of-slice long polls that decide "empty" overlap instead of each holding a worker.
   * No batching window: Lambda invokes with what it has (1–10), so a lone attention never waits for others.
   */
  defaultBatchSize: 10,
  minBatchSize: 1,
  maxBatchSize: 10,
  defaultPoolSize: 20,
  minPoolSize: 2,
  maxPoolSize: 1000,
} as const;

/**
 * The confirm queue's event source (issue #11): a slice whose short polls come back empty hands its slot's
 * attention to the confirm queue, and these invocations make the empty decision for up to `batchSize` stores at
 * once — their long polls side by side, one worker for all of them. The batching window gathers the batch; a
 * task that arrives meanwhile waits for it (docs/ARCHITECTURE.md, "Confirm queue").
 */
export const CONFIRM_EVENT_SOURCE = {
  batchSize: 100,
  batchingWindowSeconds: 1,
  /** Invocations at once (its MaximumConcurrency, reserved beside the levels' workers); at least 2 (Lambda's floor). */
  maxConcurrency: 5,
} as const;

export const RECONCILER_SCHEDULE = { rateMinutes: 1 } as const;

/** Delivery records outlive any redelivery: queue retention + DLQ retention (a redrive) + a day. */
export const DELIVERY_RECORD_TTL_SECONDS =
  STORE_QUEUE.retentionSeconds + STORE_QUEUE.deadLetterRetentionSeconds + 24 * 3600;

/**
 * The integrator API's credential cache and throttles, shared by the stack (API Gateway's authorizer
 * cache, the tenant usage plan, the WAF flood rule) and local mode (api-server.ts emulates the first two).
 */
export const INTEGRATOR_API = {
  /** API Gateway reuses an authorizer decision for this long: a revoked token works at most this much longer. */
  authorizerCacheSeconds: 60,
  /** Per-tenant steady rate, requests per second, across all of a tenant's tokens (usage plan; local bucket). */
  tenantRatePerSecond: 50,
  /** Per-tenant burst: the token bucket's depth (usage plan; local bucket). */
  tenantBurst: 100,
  /**
   * The outer, per-credential flood ceiling (WAF, before the authorizer runs), averaged over
   * `rateWindowSeconds`: well above one tenant's rate, so a client that merely exceeds its rate meets the
   * usage plan's 429 (Retry-After 1), not a minute-long block.
   */
  credentialFloodRatePerSecond: 200,
  /** The window the WAF flood rule counts over (WAF allows 60, 120, 300, 600). */
  rateWindowSeconds: 60,
} as const;

/** Local mode's and the stack's answer to an integrator token without a usage key (403 `forbidden`). */
export const NO_USAGE_KEY_MESSAGE =
  'no usable API key for this tenant’s throttle (missing on tokens issued before per-tenant throttling, or not in the usage plan); an operator restores it with POST /admin/tenants/{tenantId}/usage-key';
