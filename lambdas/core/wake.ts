import type { DispatchState } from './ports.js';
import { VISIBILITY_MARGIN_SECONDS, WAKE_MARGIN_MS } from './timing.js';

/**
 * Write-ahead for messages hidden until `visibleAt` (on this worker's clock): no lease may mark the store
 * idle before they are surely visible again on any clock. Every such guard needs WAKE_MARGIN_MS (race A,
 * docs/ARCHITECTURE.md); it is added here, once, so no call site can forget it.
 */
export const guardUntilVisible = (
  dispatch: Pick<DispatchState, 'deferWake'>,
  storeId: string,
  visibleAt: number,
): Promise<void> => dispatch.deferWake(storeId, visibleAt + WAKE_MARGIN_MS);

/**
 * After an SQS call that hid messages (or sent delayed copies) until `seconds` after it, when the call
 * ended later than the write-ahead guard allowed for (a stalled worker: the guard was computed at
 * `plannedAt`, and only VISIBILITY_MARGIN of latency is in WAKE_MARGIN_MS): guard again from now.
 * `enqueued` copies were also added to the queue: they count as an enqueue (ingest's own write), which
 * makes a concurrent "idle" fail and marks the store active again if a lease already let it go idle
 * meanwhile (a zombie re-sending after its lease expired) — the reconciler then gives it a slot.
 */
export const afterHiding = async (
  deps: { dispatch: Pick<DispatchState, 'deferWake' | 'recordEnqueued'>; clock: { now(): number } },
  storeId: string,
  opts: { plannedAt: number; seconds: number; enqueued?: number },
): Promise<void> => {
  const now = deps.clock.now();
  if (now - opts.plannedAt > VISIBILITY_MARGIN_SECONDS * 1000) {
    await guardUntilVisible(deps.dispatch, storeId, now + opts.seconds * 1000);
  }
  if (opts.enqueued) await deps.dispatch.recordEnqueued(storeId, opts.enqueued, now);
};

/**
 * Runs an SQS call that hides messages (or sends delayed copies), then `afterHiding`. A call that fails may
 * still have applied with its answer lost — after a stall, past the write-ahead guard: it gets the same late
 * guard (best effort) before its error goes on (simulation seed 4734: a stalled visibility change that
 * applied, then failed, left its messages hidden in a store another lease marked idle).
 */
export const hiding = async (
  deps: { dispatch: Pick<DispatchState, 'deferWake' | 'recordEnqueued'>; clock: { now(): number } },
  storeId: string,
  opts: { plannedAt: number; seconds: number; enqueued?: number },
  call: () => Promise<unknown>,
): Promise<void> => {
  try {
    await call();
  } catch (error) {
    await afterHiding(deps, storeId, opts).catch(() => undefined);
    throw error;
  }
  await afterHiding(deps, storeId, opts);
};
