import { deliveryKey } from '../lambdas/core/names.js';
import type { StoreState, WorldView } from './world-view.js';

/** Invariant 11: task priority within a store. */
export const PRIORITY_INVARIANT = 11;
/** SQS's largest receive: the most a slice takes in one batch. */
const SQS_MAX_BATCH = 10;

/** A high task not yet reached by a worker, and the normal tasks that were waiting when it landed. */
interface Waiting {
  storeId: string;
  eventId: string;
  /** Normal tasks of the store visible in its work queue when this high task landed (eventIds). */
  before: Set<string>;
  /** Of those, how many a marketplace call started for since. */
  overtaken: number;
  /** Injected empty receives of the high queue while this task waited: each lets one more batch past. */
  misses: number;
}

/**
 * Invariant 11 (contract: a store's `high` tasks accepted while `normal` ones wait are delivered before
 * those `normal` ones, within one slice of lag), exactly: let H be a high task and B(H) the normal tasks
 * visible in the store's work queue at the instant H's first copy landed in the high queue. Until H is
 * first received by a worker, marketplace calls may start for at most
 *   min(10, maxMessagesPerSlice) × (W + m)
 * tasks of B(H): W = the worker count (each may have had one normal receive in the air as H landed — its
 * high-queue check ran just before), m = the injected empty receives of the high queue while H waited
 * (a false-empty fault, or a short poll that missed it: each lets one batch past). That is at most one
 * slice per consumer when no receive misses H. Once received, H is in a worker's hand; a retry, a 429 or a
 * crash may then hide it like any task (its backoff does not stop the store), which the bound leaves to
 * invariants 1 and 2.
 */
export class PriorityCheck {
  private readonly waiting = new Map<string, Waiting>();
  /** High tasks ever tracked (a re-sent or duplicated copy is not a new acceptance). */
  private readonly seen = new Set<string>();

  constructor(
    private readonly world: WorldView,
    private readonly fail: (invariant: number, message: string) => void,
  ) {}

  highSent(state: StoreState, eventId: string): void {
    const key = deliveryKey(state.spec.storeId, eventId);
    if (this.seen.has(key)) return;
    this.seen.add(key);
    const before = new Set<string>();
    for (const message of state.queue.visible(this.world.now)) {
      const id = eventIdOf(message.body);
      if (id !== undefined) before.add(id);
    }
    this.waiting.set(key, { storeId: state.spec.storeId, eventId, before, overtaken: 0, misses: 0 });
  }

  highReached(storeId: string, eventId: string): void {
    this.waiting.delete(deliveryKey(storeId, eventId));
  }

  highMissed(storeId: string): void {
    for (const waiting of this.waiting.values()) if (waiting.storeId === storeId) waiting.misses++;
  }

  taskCallStarted(storeId: string, eventId: string): void {
    const state = this.world.store(storeId);
    if (!state) return;
    const batch = Math.min(SQS_MAX_BATCH, state.spec.policy.maxMessagesPerSlice);
    for (const waiting of this.waiting.values()) {
      if (waiting.storeId !== storeId || !waiting.before.delete(eventId)) continue;
      waiting.overtaken++;
      const bound = batch * (this.world.workers + waiting.misses);
      if (waiting.overtaken > bound)
        this.fail(
          PRIORITY_INVARIANT,
          `${storeId}: ${waiting.overtaken} normal tasks waiting when high task ${waiting.eventId} was accepted were called before it (bound ${batch} × (${this.world.workers} workers + ${waiting.misses} missed receives))`,
        );
    }
  }
}

const eventIdOf = (body: string): string | undefined => {
  try {
    const parsed = JSON.parse(body) as { eventId?: unknown };
    return typeof parsed.eventId === 'string' ? parsed.eventId : undefined;
  } catch {
    return undefined;
  }
};
