import { SLICE_SECONDS_LIMIT, type Policy } from './plans.js';

/**
 * Lease and timeout arithmetic, in one place so the stack, the worker and the tests agree.
 *
 * lease TTL      = maxSliceSeconds + one marketplace call's timeout + margin (clock skew, DynamoDB/SQS calls)
 * Lambda timeout > the longest possible lease (SLICE_SECONDS_LIMIT) + end-of-slice writes
 * attention visibility ≥ 6 × Lambda timeout (AWS rule for SQS event sources)
 */
export const LEASE_MARGIN_MS = 10_000;
/** Allowed disagreement between clocks; a lease is only treated as expired this long after its expiry. */
export const CLOCK_SKEW_MS = 2_000;
/** Received task messages stay invisible this long past the lease, so no other consumer sees them mid-lease. */
export const VISIBILITY_MARGIN_SECONDS = 5;
/**
 * Added to every `wakeAt`: a wake time is computed on the writer's clock before SQS starts the hidden
 * message's timer (a DynamoDB write and an SQS call later), and compared on another worker's clock. Found
 * by the deterministic simulation (race A, docs/ARCHITECTURE.md).
 */
export const WAKE_MARGIN_MS = CLOCK_SKEW_MS + VISIBILITY_MARGIN_SECONDS * 1000;
/** The ingest function's Lambda timeout: no ingest request, and so no send of its, outlives it. */
export const INGEST_TIMEOUT_SECONDS = 10;
/**
 * How long an ingest's write-ahead holds its store awake if the ingest never says it is done (it died
 * between its write-ahead and its end): its Lambda's timeout, plus the clock skew between it and a worker.
 */
export const INGEST_WINDOW_MS = INGEST_TIMEOUT_SECONDS * 1000 + CLOCK_SKEW_MS;
export const DEFAULT_MARKETPLACE_TIMEOUT_MS = 5_000;
export const MAX_MARKETPLACE_TIMEOUT_MS = 15_000;
/**
 * A running slice re-reads its store (status, overrides, campaigns) before a marketplace call once this long has
 * passed since its last read began: a pause, a disable, or a lowered cap or rate stops the slice's calls within it
 * (invariant 13, lambdas/core/store-watch.ts).
 */
export const STORE_RECHECK_MS = 1_000;
/** SQS's ceiling for DelaySeconds and for one ChangeMessageVisibility hop we use. */
export const MAX_DELAY_SECONDS = 900;

export const leaseTtlMs = (policy: Pick<Policy, 'maxSliceSeconds'>, marketplaceTimeoutMs: number): number =>
  policy.maxSliceSeconds * 1000 + marketplaceTimeoutMs + LEASE_MARGIN_MS;

/** Time after the slice's end reserved for releasing/re-signalling before the Lambda may be cut off. */
const END_OF_SLICE_SECONDS = 15;

export const workerTimeoutSeconds = (marketplaceTimeoutMs = MAX_MARKETPLACE_TIMEOUT_MS): number =>
  Math.ceil(leaseTtlMs({ maxSliceSeconds: SLICE_SECONDS_LIMIT }, marketplaceTimeoutMs) / 1000) +
  END_OF_SLICE_SECONDS;

export const attentionVisibilitySeconds = (workerTimeout: number): number => 6 * workerTimeout;

/**
 * How long after a lease's expiry (on its holder's clock) a message its holder hid may still be hidden,
 * whatever its holder's calls did: the holder was invoked before it acquired the lease, so its Lambda
 * timeout kills it at most `workerTimeoutSeconds()` after the expiry; a call it sent before that (one that
 * stalled: a zombie) hides a message for at most MAX_DELAY_SECONDS after it lands (a receive for the lease
 * and its margin, a retry's backoff or a throttled copy's delay); then the clocks' skew. The reconciler's
 * reclaim forbids idle that long, so a zombie's late hiding can never leave a message in an idle store.
 */
export const ZOMBIE_HIDE_MS = (workerTimeoutSeconds() + MAX_DELAY_SECONDS) * 1000 + CLOCK_SKEW_MS;

export const clampDelaySeconds = (seconds: number): number =>
  Math.max(0, Math.min(MAX_DELAY_SECONDS, Math.ceil(seconds)));

/**
 * Retention (issue #10, "no silent expiry"). SQS deletes a message `STORE_RETENTION_MS` after it was sent
 * (its SentTimestamp), silently. Every copy of a task carries `acceptedAt` in its body (set by ingest).
 *
 * - A task older than `EXPIRY_AGE_MS` since acceptance that the marketplace throttles once more is
 *   dead-lettered with code `expiring` (and `TasksExpiring` counted) instead of being re-sent again.
 * - The reconciler's retention pass re-sends, as fresh copies (acceptance kept), the tasks of any store
 *   whose queue may hold a message sent more than `REFRESH_AGE_MS` ago: SQS's clock restarts, nothing
 *   reaches 14 days, a paused store gets its backlog back on resume.
 */
export const STORE_RETENTION_MS = 14 * 24 * 3600 * 1000;
/** Accepted this long ago and throttled again: dead-lettered (`expiring`) rather than re-sent. */
export const EXPIRY_AGE_MS = STORE_RETENTION_MS - 2 * 24 * 3600 * 1000;
/** A store whose queue may hold a message sent this long ago gets a retention pass. */
export const REFRESH_AGE_MS = 7 * 24 * 3600 * 1000;
/** Receives (of up to 10 messages) the retention pass makes per reconciler run, over all stores. */
export const RETENTION_BATCHES_PER_RUN = 100;
/** The pass's copies are delayed this long, so the pass does not take them again while it runs. */
export const RETENTION_COPY_DELAY_SECONDS = MAX_DELAY_SECONDS;
