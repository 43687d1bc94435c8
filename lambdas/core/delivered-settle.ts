import type { Clock, DeliveredSettle, DeliveryLog, DeliveryRecord } from './ports.js';

/** DynamoDB's BatchWriteItem limit. */
export const SETTLE_BATCH_MAX = 25;
/** Tries of the delivered settles after a 2xx: a lost settle would mean a second call when the message comes back. */
export const SETTLE_TRIES = 3;
/** The first retry's wait; the next ones wait longer (200 ms, 400 ms). */
export const SETTLE_RETRY_MS = 200;

/**
 * The whole `delivered` item a settle writes: the claim's record (its attempts, first/last attempt, last
 * error, as this attempt's claim wrote them: nothing else writes the item while that claim is live) with
 * the call counted, the claim's holder and expiry removed, and the time of the 2xx.
 */
export const deliveredRecord = (settle: DeliveredSettle): DeliveryRecord => {
  const { holder: _holder, claimUntil: _until, deadMessageId: _dead, ...kept } = settle.claimed;
  return {
    ...kept,
    storeId: settle.storeId,
    eventId: settle.eventId,
    status: 'delivered',
    attempts: (kept.attempts ?? 0) + 1,
    updatedAt: settle.now,
  };
};

/** The delivered settles that were still not written after every try; `cause` is the last error, if any. */
export class UnsettledError extends Error {
  constructor(
    readonly unsettled: DeliveredSettle[],
    cause: unknown,
  ) {
    super(
      `${unsettled.length} delivered settle(s) not written` +
        (cause === undefined ? '' : `: ${String(cause)}`),
    );
    this.name = 'UnsettledError';
  }
}

const chunks = <T>(items: T[], size: number): T[][] => {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
};

/**
 * Writes `settles` as `delivered`, up to SETTLE_BATCH_MAX per request (one request for a slice's receive
 * batch), trying the ones DynamoDB left unprocessed, or a failed request's, again with a growing wait.
 * Throws UnsettledError naming the ones still not written after SETTLE_TRIES: their messages must not be
 * deleted (the task is called again once its claim expires: the crash-between-call-and-settle window).
 */
export const writeDelivered = async (
  deps: { deliveries: Pick<DeliveryLog, 'settleDelivered'>; clock: Pick<Clock, 'sleep'> },
  settles: DeliveredSettle[],
): Promise<void> => {
  let left = settles;
  let lastError: unknown;
  for (let tried = 1; left.length > 0; tried++) {
    const next: DeliveredSettle[] = [];
    lastError = undefined;
    for (const chunk of chunks(left, SETTLE_BATCH_MAX)) {
      try {
        next.push(...(await deps.deliveries.settleDelivered(chunk)));
      } catch (error) {
        lastError = error;
        next.push(...chunk);
      }
    }
    left = next;
    if (left.length === 0) return;
    if (tried >= SETTLE_TRIES) throw new UnsettledError(left, lastError);
    await deps.clock.sleep(SETTLE_RETRY_MS * tried);
  }
};
