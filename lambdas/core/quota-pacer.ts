import type { Clock } from './ports.js';
import type { Pacer } from './rate.js';

/**
 * A lease's pacer under the marketplace's window quota (`RateLimit-Remaining: 0` until `RateLimit-Reset`,
 * `quotaSpentUntil`): no call before `until()`, whatever the rate's own pacing allows. A short wait (one the slice
 * would sleep through after a 429: `resume` answers when) is slept here; a longer one refuses the call as held, so
 * the slice re-sends the messages in hand as copies delayed until then, as for another consumer's 429, and hands
 * no message back (a hand-back counts a receive toward the DLQ's limit). The other consumers are told by the hold
 * the slice writes on the shared schedule (`holdTat`); a single-consumer store's next lease by its carried pace.
 */
export const quotaPacer = (
  inner: Pacer,
  clock: Clock,
  until: () => number,
  resume: (afterSeconds: number, now: number, deadline: number) => number | undefined,
): Pacer => {
  /** The quota's end, when this pacer (not the inner one) refused the last call. */
  let refusedUntil: number | undefined;
  let sleptMs = 0;
  return {
    async acquire(deadline, inHand, atInstant) {
      refusedUntil = undefined;
      const hold = until();
      const now = clock.now();
      if (hold > now) {
        if (resume((hold - now) / 1000, now, deadline) === undefined) {
          refusedUntil = hold;
          return false;
        }
        await clock.sleep(hold - now);
        sleptMs += clock.now() - now;
      }
      return inner.acquire(deadline, inHand, atInstant);
    },
    get carry() {
      return Math.max(inner.carry, until());
    },
    get blockedUntil() {
      return refusedUntil ?? inner.blockedUntil;
    },
    get held() {
      return refusedUntil !== undefined || inner.held;
    },
    get stalled() {
      return refusedUntil === undefined && inner.stalled;
    },
    get sleptMs() {
      return sleptMs + inner.sleptMs;
    },
  };
};
