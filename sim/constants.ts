/** The simulated deployment's settings (the production defaults where one exists). */
export const T0 = 1_800_000_000_000;
export const RECONCILER_PERIOD_MS = 60_000;
/** The schedule fires each period plus up to this much (EventBridge Scheduler is not exact). */
export const RECONCILER_JITTER_MS = 2_000;
/** AQ_ATTENTION_GRACE_SECONDS default. */
export const ATTENTION_GRACE_MS = 20_000;
/** AQ_MARKETPLACE_TIMEOUT_MS default. */
export const MARKETPLACE_TIMEOUT_MS = 5_000;
/** AQ_EMPTY_POLL_SECONDS default. */
export const EMPTY_POLL_SECONDS = 1;
/** Longest injected stall of one SQS/DynamoDB call (SDK retries under throttling), inside the lease margin. */
export const STALL_MAX_MS = 2_000;
