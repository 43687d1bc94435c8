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
/**
 * Longest stall of one worker's SQS/DynamoDB call beyond the lease margin (a zombie): under the worker's
 * Lambda timeout (100 s), long enough for the reconciler to reclaim its lease and another worker to take it.
 */
export const ZOMBIE_STALL_MAX_MS = 90_000;

/**
 * Core fixes the simulation waits for (lambdas/core is fixed by its owners, not here). While a flag is
 * false, the fault that exposes the bug is not injected — the check stays as strict; flip the flag once
 * the fix is merged and the fault runs.
 */
export const CORE_FIXES = {
  /**
   * rate.ts sharedPacer: after MAX_TRIES late wake-ups the call goes ahead "regardless", even when the last
   * DynamoDB write stalled past the slice deadline (seed 958 with zombie stalls: a call 35 s past the
   * deadline, after the lease expired). Fixed when the pacer re-checks the deadline before it answers true
   * (and since session 23 it refuses the call after MAX_TRIES late wake-ups altogether).
   */
  pacerRechecksDeadline: true,
  /**
   * slice.ts write-ahead guards (`guardUntilVisible` then `resend`/`changeVisibility`): the guard is computed
   * before the SQS call that starts the hidden message's timer; a stall longer than WAKE_MARGIN_MS between
   * them lets markIdle pass while the message is still hidden (seed 663: a 429's copies sent 80 s after
   * their guard, store idle with a message in its queue). Fixed when the delay is computed from the
   * guarded instant at the SQS call (or the guard is written after it).
   */
  wakeGuardSurvivesStall: true,
  /**
   * slice.ts throttled paths: a zombie (stalled past its lease after a 429) still re-sends "the rest of its
   * batch" as fresh copies; its receipt handles are stale, so the originals stay too, and the copies land
   * in a store that went idle meanwhile, found only by the sweep (seed 2080 at 77b… : settle('pending')
   * stalled 60 s, copies sent at 99.4 s into a store idle since 87.2 s). Fixed when the resend is fenced
   * (the lease checked, or the originals deleted first and only those copied).
   */
  zombieResendFenced: true,
  /**
   * deliver-task.ts: the version mark is written with `delivered`, after the call. A versioned call whose
   * effect landed but whose settle did not (a timeout that applied, a crash or a stall after the 2xx) leaves
   * no mark, so a lower version is delivered after it even with one consumer (seed 744: ent-0 v9 timed out
   * but applied at 33.4 s, v6 delivered at 34.3 s; seed 1932: v3's settle stalled, v0 delivered). Fixed
   * when the mark is raised before the call (the higher version is retried until delivered or
   * dead-lettered). Until then versioned stores run only in calm seeds (no crash, stall or timeout).
   */
  versionMarkBeforeCall: true,
  /**
   * slice.ts receive: the visibility is sized from a clock read before ReceiveMessage (lease end + 5 s) but
   * runs from when SQS answers; a receive that stalls past its lease hides its messages beyond any wake
   * guard — the reclaim's guard is the dead lease + 6 s — so a later lease finds the queue empty and marks
   * the store idle (seed 7657 at 0c0be92: receive stalled 21 s, worker crashed, message hidden until 69 s,
   * store idle at 57.5 s). Fixed when a receive that returns past the lease end hands its messages back
   * (or guards until they are visible) before anything else.
   */
  receiveVisibilityBounded: true,
  /**
   * slice.ts throttle re-send and retry hiding: with the two fixes above, a stall *inside* the SQS call
   * (its effect lands late, after the zombie's lease and after a lease let the store go idle) is covered
   * only once the call returns (`afterHiding`: guard again, count the copies as an enqueue). Until then the
   * store holds messages outside the active index — the same window as ingest between its send and its
   * enqSeq bump, which the checks excuse for ingest only (seed 6779: a resend stalled 8 s landed in a
   * store idle since 86.1 s). Fixed when a worker's own send-then-record window is excused like ingest's,
   * or the enqueue is recorded before the send (write-ahead, issue #10 point 3).
   */
  hidingCallStallCovered: true,
  /**
   * slice.ts/attention.ts: a slice that fails (a hard SQS/DynamoDB error) after a marketplace 429 forgets
   * its Retry-After. The failure escapes to runLeased's catch, which requeues the slot at now + the error
   * backoff (5 s) with the lease's old nextCallAt, so a single-consumer store's next slice calls before the
   * Retry-After ends (seed 1513 at the time: holdTat(s0, +10 s) applied but its answer lost, next call 4.9 s
   * early; seed 2471: the throttle path's guard write failed). Also when deliverTask's own settle('pending')
   * fails after the 429 (deliverTask throws: the slice never learns the Retry-After). Fixed when an error
   * ending a slice keeps the latest Retry-After the slice was told (resumeAt and nextCallAt ≥ it). Fixed
   * (slice.ts `throttledUntil`; runSlice turns any error into an error result itself).
   */
  sliceErrorKeepsRetryAfter: true,
  /**
   * slice.ts receive error path: a receive whose answer is lost after it applied hid its messages for the
   * visibility sized when the call began (lease end − then + margin), from when it applied; after a stall
   * beyond the lease margin that is past the guard the error path writes (lease end + margin), so the slot's
   * next lease finds the queue empty and marks the store idle with its messages still hidden (seed 4776 at
   * the time: a receive stalled 15 s, applied at 19.4 s hiding 7 messages until 43.4 s, error answer, guard
   * 35.0 s, idle at 38.8 s). Fixed when the error path guards until the failed receive's call start + the
   * visibility it asked for + the time the call took (or the visibility is sized per attempt from a bound
   * the guard knows). Fixed: an error result names `hiddenUntil` (from when each receive answered or
   * failed) and the error path guards until then; a failed hiding call is guarded as a late one (wake.ts).
   */
  failedReceiveGuarded: true,
};

/** Worker calls that get no zombie stall until the matching CORE_FIXES flag is set. */
export const ZOMBIE_STALL_GATED: ReadonlySet<string> = new Set([
  ...(CORE_FIXES.pacerRechecksDeadline
    ? []
    : ['dispatch.restartTat', 'dispatch.advanceTat', 'dispatch.placeTat']),
  ...(CORE_FIXES.wakeGuardSurvivesStall ? [] : ['dispatch.deferWake', 'dispatch.holdTat']),
  ...(CORE_FIXES.hidingCallStallCovered ? [] : ['sqs.resend', 'sqs.changeVisibility']),
  ...(CORE_FIXES.zombieResendFenced ? [] : ['deliveries.settle:pending']),
  ...(CORE_FIXES.receiveVisibilityBounded ? [] : ['sqs.receive']),
]);
