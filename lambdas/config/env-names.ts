/**
 * Names of every environment variable the runtime reads. The CDK stack and local mode both
 * import this module, so a variable cannot be renamed on one side only.
 */
export const EnvNames = {
  stage: 'AQ_STAGE',
  queuePrefix: 'AQ_QUEUE_PREFIX',
  storesTable: 'AQ_STORES_TABLE',
  dispatchTable: 'AQ_DISPATCH_TABLE',
  tokensTable: 'AQ_TOKENS_TABLE',
  deliveriesTable: 'AQ_DELIVERIES_TABLE',
  /** The `normal` level's attention queue (the original, shared one). */
  attentionQueueUrl: 'AQ_ATTENTION_QUEUE_URL',
  /** The `high` and `low` levels' attention queues; unset, those levels share the `normal` one. */
  attentionQueueUrlHigh: 'AQ_ATTENTION_QUEUE_URL_HIGH',
  attentionQueueUrlLow: 'AQ_ATTENTION_QUEUE_URL_LOW',
  /**
   * The confirm queue (issue #11): a slice whose short polls come back empty hands its slot's attention to it, and
   * that queue's slices make the empty decision together. Unset, every slice long-polls itself (as before it).
   */
  confirmQueueUrl: 'AQ_CONFIRM_QUEUE_URL',
  marketplaceBaseUrl: 'MARKETPLACE_BASE_URL',
  marketplaceTimeoutMs: 'AQ_MARKETPLACE_TIMEOUT_MS',
  emptyPollSeconds: 'AQ_EMPTY_POLL_SECONDS',
  attentionGraceSeconds: 'AQ_ATTENTION_GRACE_SECONDS',
  sweepStoresPerRun: 'AQ_SWEEP_STORES_PER_RUN',
  storeCacheSeconds: 'AQ_STORE_CACHE_SECONDS',
  /** Retention (issue #10): a task accepted this long ago and throttled again is dead-lettered (`expiring`). */
  expiryAgeSeconds: 'AQ_EXPIRY_AGE_SECONDS',
  /** Retention: a store whose queues may hold a message sent this long ago gets a retention pass. */
  refreshAgeSeconds: 'AQ_REFRESH_AGE_SECONDS',
  /** Retention: the pass's copies are delayed this long (longer than a pass may run). */
  refreshCopyDelaySeconds: 'AQ_REFRESH_COPY_DELAY_SECONDS',
  /** Retention: receives (of up to 10 tasks) the pass makes per reconciler run, over all stores. */
  refreshBatchesPerRun: 'AQ_REFRESH_BATCHES_PER_RUN',
  /**
   * `{restApiId}:{stageName}` of the API stage whose usage plan throttles each tenant (API Gateway's own
   * notation for a usage plan's stage); the admin function finds the plan by it. Set on AWS only: when
   * unset (local mode) tenant usage keys are derived in process.
   */
  usagePlanStage: 'AQ_USAGE_PLAN_STAGE',
  /**
   * Store priority on AWS (issue #13): each level's floor (`high=10,normal=6,low=4`) and its event source
   * mapping's UUID (`high=…,normal=…,low=…`). Set on AWS: each reconciler run lends unused floors to levels
   * with attentions waiting (level-caps.ts). Unset (local mode), no run touches the caps.
   */
  levelFloors: 'AQ_LEVEL_FLOORS',
  levelMappings: 'AQ_LEVEL_MAPPINGS',
  /** `on` (default) or `off`: off, runs only bring caps raised before the switch back to the floors. */
  levelLoans: 'AQ_LEVEL_LOANS',
  /** Optional endpoint overrides: set only in local mode and tests (emulators). */
  sqsEndpoint: 'AQ_SQS_ENDPOINT',
  dynamoEndpoint: 'AQ_DYNAMODB_ENDPOINT',
  region: 'AWS_REGION',
  logLevel: 'POWERTOOLS_LOG_LEVEL',
  serviceName: 'POWERTOOLS_SERVICE_NAME',
  metricsNamespace: 'POWERTOOLS_METRICS_NAMESPACE',
  /** Powertools Tracer reads it: 'false' (the stack's `-c tracing=false`) turns its subsegments off. */
  traceEnabled: 'POWERTOOLS_TRACE_ENABLED',
} as const;

export type EnvName = (typeof EnvNames)[keyof typeof EnvNames];
