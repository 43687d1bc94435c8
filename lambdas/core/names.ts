import type { StorePriority } from './plans.js';

/**
 * Every queue name, table key, index name and metric name in one place (like BullMQ's QueueKeys),
 * shared by the runtime, the CDK stack, local mode and the tests.
 */

/** Store ids become part of SQS queue names (≤ 80 chars of [A-Za-z0-9_-]). */
export const STORE_ID_PATTERN = /^[A-Za-z0-9_-]{1,48}$/;
/**
 * Queue prefixes are short (prefix + marker + store id stays within SQS's 80 characters) and contain no
 * '-', so one deployment's IAM pattern (`aq-s-*`) can never cover another's queues (`aq-s-…` of prefix `aqs`
 * is `aqs-s-…`).
 */
export const QUEUE_PREFIX_PATTERN = /^[a-z][a-z0-9]{0,15}$/;

export const QueueNames = {
  storeQueue: (prefix: string, storeId: string): string => `${prefix}-s-${storeId}`,
  /** Its own marker, not a suffix: no store id can produce another store's DLQ name. */
  storeDeadLetterQueue: (prefix: string, storeId: string): string => `${prefix}-d-${storeId}`,
  /** The store's high-priority work queue (task priority within a store), drained before the work queue. */
  storePriorityQueue: (prefix: string, storeId: string): string => `${prefix}-h-${storeId}`,
  /** Used by local mode; the stack lets CloudFormation name the attention queues. */
  attentionQueue: (prefix: string): string => `${prefix}-attention`,
  /**
   * Each store priority level's attention queue (local mode). `normal` is the original attention queue, so
   * attentions in flight across the upgrade that added the levels are still consumed.
   */
  levelAttentionQueue: (prefix: string, level: StorePriority): string =>
    level === 'normal' ? `${prefix}-attention` : `${prefix}-attention-${level}`,
  attentionDeadLetterQueue: (prefix: string): string => `${prefix}-attention-dlq`,
  /** The confirm queue (local mode): slots whose short polls came back empty, waiting for their empty decision. */
  confirmQueue: (prefix: string): string => `${prefix}-attention-confirm`,
  /**
   * IAM grants SQS actions on these name patterns only: store work queues, store DLQs, store high-priority
   * queues (in that order; the third is granted what the first is).
   */
  storeQueuePatterns: (prefix: string): string[] => [`${prefix}-s-*`, `${prefix}-d-*`, `${prefix}-h-*`],
} as const;

/** Table logical ids and key attribute names. Physical names are CloudFormation's (AWS) or prefixed (local). */
export const Tables = {
  stores: { id: 'Stores', partitionKey: 'storeId' },
  dispatch: {
    id: 'Dispatch',
    partitionKey: 'storeId',
    activeIndex: 'active',
    activeIndexPartitionKey: 'activeShard',
    /** The oldest-task estimate (activation time, then each slice's oldest SentTimestamp): the listing's order. */
    activeIndexSortKey: 'headSentAt',
  },
  tokens: {
    id: 'Tokens',
    partitionKey: 'tokenHash',
    tenantIndex: 'byTenant',
    tenantIndexPartitionKey: 'tenantId',
  },
  deliveries: { id: 'Deliveries', partitionKey: 'deliveryKey', ttlAttribute: 'expiresAt' },
} as const;

export type TableKey = keyof typeof Tables;

export const localTableName = (prefix: string, table: TableKey): string => `${prefix}-${Tables[table].id}`;

/** The active-store index is sharded so no single index partition takes every idle→busy transition. */
export const ACTIVE_SHARDS = 16;

export const activeShardOf = (storeId: string): string => {
  let hash = 0;
  for (let i = 0; i < storeId.length; i++) hash = (hash * 31 + storeId.charCodeAt(i)) >>> 0;
  return String(hash % ACTIVE_SHARDS);
};

/** The reconciler keeps its sweep cursor in the dispatch table under this reserved id. */
export const SWEEP_CURSOR_ID = '#sweep-cursor';

/** The index backfill's progress through the dispatch table (a Scan cursor, or 'done'), under this reserved id. */
export const INDEX_BACKFILL_CURSOR_ID = '#index-backfill-cursor';

/** The AWS level caps' recent history (caps lowered, and until when their workers may still run), under this id. */
export const LEVEL_CAPS_STATE_ID = '#level-caps';

/**
 * A store's or a tenant's campaign windows: one item each in the dispatch table, under a reserved id
 * (`#` never occurs in a store id, so no store's dispatch item collides).
 */
export const campaignListId = (scope: 'store' | 'tenant', id: string): string => `#campaigns:${scope}:${id}`;

/** A store's dead-letter tally (core/dead-letter-audit.ts): one item in the dispatch table, under a reserved id. */
export const deadLetterTallyId = (storeId: string): string => `#dead-letters:${storeId}`;

/** The marketplace's idempotency key for one task of one store (contract: `{storeId}:{eventId}`). */
export const deliveryKey = (storeId: string, eventId: string): string => `${storeId}:${eventId}`;
/** Highest delivered version of one entity of one store. `#` never occurs in a store id, so no delivery key collides. */
export const entityVersionKey = (storeId: string, entityId: string): string => `v#${storeId}#${entityId}`;

export const METRICS_NAMESPACE = 'AttentionQueue';

export const MetricNames = {
  tasksAccepted: 'TasksAccepted',
  tasksRejected: 'TasksRejected',
  tasksDelivered: 'TasksDelivered',
  tasksFailed: 'TasksFailed',
  tasksDeadLettered: 'TasksDeadLettered',
  tasksDuplicate: 'TasksDuplicate',
  tasksStale: 'TasksStale',
  tasksResent: 'TasksResent',
  /** A task accepted more than EXPIRY_AGE ago was throttled again: dead-lettered (`expiring`), never re-sent. */
  tasksExpiring: 'TasksExpiring',
  /** Tasks the retention pass re-sent as fresh copies; dimension `age`: old (sent > REFRESH_AGE ago) or recent. */
  tasksRefreshed: 'TasksRefreshed',
  /**
   * Dead letters the reconciler re-sent into their store's DLQ as fresh copies (dead-letter keep); dimension
   * `age`: old (sent > REFRESH_AGE ago: the alarm's) or recent.
   */
  deadLettersRefreshed: 'DeadLettersRefreshed',
  /**
   * A store's work queues (`queue=work`) or its DLQ (`queue=dead-letter`) may hold a message sent 1.25 refresh
   * ages ago or more (8.75 days by default): the passes have not kept up. One per store per look (a run, or a
   * sweep visit); the store's id is in the log line.
   */
  retentionOverdue: 'RetentionOverdue',
  attentionsPublished: 'AttentionsPublished',
  attentionsDiscarded: 'AttentionsDiscarded',
  attentionsCoalesced: 'AttentionsCoalesced',
  signalFailures: 'SignalFailures',
  slicesStarted: 'SlicesStarted',
  slicesEnded: 'SlicesEnded',
  /** A slice ended on an error and its store backs off; dimension `streak`: first (1–2 in a row) or repeated (≥ 3). */
  sliceErrorBackoff: 'SliceErrorBackoff',
  leaseAcquired: 'LeaseAcquired',
  leaseBlocked: 'LeaseBlocked',
  reconcilerRepairs: 'ReconcilerRepairs',
  reconcilerStoresChecked: 'ReconcilerStoresChecked',
  /** Dead letters found in store DLQs that the worker did not write (SQS moved them itself), per run. */
  deadLettersUnaccounted: 'DeadLettersUnaccounted',
  marketplaceLatency: 'MarketplaceLatency',
  timeToDrain: 'TimeToDrain',
  oldestTaskAge: 'OldestTaskAge',
  /** Marketplace 429s that throttled the store (`throttleScope: 'store'`, the default): the alarm's measure. */
  marketplaceThrottled: 'MarketplaceThrottled',
  /**
   * Marketplace 429s under `throttleScope: 'task'`: each sent its task back alone. Apart from MarketplaceThrottled,
   * so a store an operator set to `task` (its marketplace's 429s are about tasks) does not keep the
   * MarketplaceThrottling alarm firing.
   */
  marketplaceTaskThrottled: 'MarketplaceTaskThrottled',
  /**
   * Adaptive rate: a store's effective rate changed because of the marketplace; dimension `reason`: header (its
   * rate-limit headers) or backoff (a bare 429). The store's id, rates and reason go in the log line's fields.
   */
  marketplaceRateAdjusted: 'MarketplaceRateAdjusted',
  /** Operator purges ("controlled discard", issue #4): one per purge, and the tasks it discarded. */
  storePurges: 'StorePurges',
  tasksPurged: 'TasksPurged',
  /** Slices that ran under a campaign window's policy; dimension `scope`: store or tenant (no ids). */
  slicesUnderCampaign: 'SlicesUnderCampaign',
  /**
   * Store priority on AWS: the workers a level was lent this run beyond its floor (dimension `level`), one record
   * per reconciler run, so a minute's sum is the loan.
   */
  levelLoan: 'LevelLoan',
  /** A reconciler run could not read or set the levels' caps (its loans stay as they were; floors always hold). */
  levelCapsFailures: 'LevelCapsFailures',
} as const;

export type MetricName = (typeof MetricNames)[keyof typeof MetricNames];

/**
 * Name of a tenant's API Gateway API key (the usage-plan identifier of its throttle bucket). API keys are
 * account- and region-wide, so the name carries the deployment's prefix; prefixes contain no '-', so no
 * other deployment's name can start with this one's `{prefix}-tenant-`.
 */
export const usageKeyName = (prefix: string, tenantId: string): string => `${prefix}-tenant-${tenantId}`;

/**
 * Tag every resource the service creates at run time (store queues and DLQs, tenant API keys) carries,
 * valued with the deployment's queue prefix: `npm run teardown` and an operator find what `cdk destroy`
 * leaves behind by it.
 */
export const DEPLOYMENT_TAG_KEY = 'attention-queue:deployment';
