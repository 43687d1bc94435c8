import { attentionLevelOf, type AttentionMessage } from '../lambdas/core/messages.js';
import { STORE_PRIORITIES, type StorePriority } from '../lambdas/core/plans.js';
import { eligibleLevels, LevelPicker, type PriorityShares } from '../lambdas/core/priority-shares.js';

/**
 * Store priority across stores: a discrete-event model of the worker pool in front of one attention queue
 * per level, driven by the real LevelPicker (what local mode's pool runs) and the real routing of an
 * attention to its level's queue (`attentionLevelOf`). Stores signal their level as their policy says at
 * the moment of each publish (ingest, requeue, fan-out), so a store whose priority changes moves queue at
 * its next publish. The simulation checks (sim/store-priority-check.ts) and the scale benchmark
 * (bench/sim/priority.ts) both run it.
 */
export interface PoolStore {
  storeId: string;
  priority: StorePriority;
  maxConsumers: number;
  maxMessagesPerSlice: number;
  maxSliceMs: number;
}

export interface PoolArrival {
  at: number;
  storeId: string;
  tasks: number;
}

/** How a free worker chooses: the real picker, or one of the broken ways the simulation must reject. */
export type PoolChoice = 'shares' | 'strict' | 'single-queue' | 'blind' | 'headroom-ignored';

export interface PoolConfig {
  workers: number;
  shares: PriorityShares;
  /** Workers kept for `high` while the lower levels saturate the pool (`eligibleLevels`); default none. */
  highHeadroom?: number;
  choice: PoolChoice;
  /** Event source delivery + invoke before a slice's first call. */
  invokeMs: number;
  /** One marketplace call. */
  callMs: (storeId: string) => number;
  /** The long poll that decides "empty" at the end of a slice that drained its store. */
  emptyPollMs: number;
  /** A blind worker that finds its drawn level empty waits this long before drawing again. */
  blindWaitMs?: number;
  /** Priority changes mid-run (a plan change, an override, a campaign). */
  reprioritize?: { at: number; storeId: string; priority: StorePriority }[];
  /** 0..1 random source (seeded): used only by the blind variant. */
  random?: () => number;
}

export interface SliceRecord {
  storeId: string;
  level: StorePriority;
  start: number;
  end: number;
}

/** What the checks observe: every slice, every task's latency, every moment the pool changes. */
export interface PoolObserver {
  slice?(record: SliceRecord): void;
  delivered?(storeId: string, acceptedAt: number, deliveredAt: number): void;
  /** After each dispatch round: busy workers, waiting attentions per level, live leases of the store that changed. */
  /**
   * After each dispatch round: busy workers and attentions waiting per queue, and, by the level each
   * store had when it signalled, attentions waiting (`asked`) and slices running (`serving`).
   */
  settled?(
    now: number,
    busy: number,
    waiting: Readonly<Record<StorePriority, number>>,
    asked: Readonly<Record<StorePriority, number>>,
    serving: Readonly<Record<StorePriority, number>>,
  ): void;
  leases?(storeId: string, live: number, max: number): void;
  /** `level`: the queue the attention came from; `storeLevel`: the store's level when it signalled. */
  started?(storeId: string, level: StorePriority, storeLevel: StorePriority, now: number): void;
}

interface StoreState {
  spec: PoolStore;
  priority: StorePriority;
  /** Acceptance times of the tasks not yet taken by a slice, oldest first. */
  backlog: number[];
  head: number;
  slots: number;
  leases: number;
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

type Event =
  | { at: number; seq: number; kind: 'arrive'; storeId: string; tasks: number }
  | {
      at: number;
      seq: number;
      kind: 'end';
      storeId: string;
      level: StorePriority;
      storeLevel: StorePriority;
      charge: Charge;
      start: number;
    }
  | { at: number; seq: number; kind: 'reprioritize'; storeId: string; priority: StorePriority }
  | { at: number; seq: number; kind: 'wake' };

type Charge = ReturnType<LevelPicker['begin']>;

/** A binary heap of events by time, then insertion order (deterministic). */
class EventHeap {
  private readonly items: Event[] = [];
  private seq = 0;
  get size(): number {
    return this.items.length;
  }
  push(event: DistributiveOmit<Event, 'seq'>): void {
    const item = { ...event, seq: this.seq++ } as Event;
    const a = this.items;
    a.push(item);
    let i = a.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.before(a[i] as Event, a[p] as Event)) break;
      [a[i], a[p]] = [a[p] as Event, a[i] as Event];
      i = p;
    }
  }
  pop(): Event | undefined {
    const a = this.items;
    const top = a[0];
    const last = a.pop();
    if (a.length > 0 && last) {
      a[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < a.length && this.before(a[l] as Event, a[m] as Event)) m = l;
        if (r < a.length && this.before(a[r] as Event, a[m] as Event)) m = r;
        if (m === i) break;
        [a[i], a[m]] = [a[m] as Event, a[i] as Event];
        i = m;
      }
    }
    return top;
  }
  private before(x: Event, y: Event): boolean {
    return x.at < y.at || (x.at === y.at && x.seq < y.seq);
  }
}

/** A waiting attention: its store and the store's level when it signalled. */
interface Waiting {
  storeId: string;
  storeLevel: StorePriority;
}

/** A FIFO of waiting attentions with O(1) shift. */
class Fifo {
  private items: Waiting[] = [];
  private head = 0;
  get length(): number {
    return this.items.length - this.head;
  }
  push(item: Waiting): void {
    this.items.push(item);
  }
  shift(): Waiting | undefined {
    if (this.head >= this.items.length) return undefined;
    const item = this.items[this.head++];
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }
}

export class PriorityPool {
  now = 0;
  private readonly stores = new Map<string, StoreState>();
  private readonly queues: Record<StorePriority, Fifo> = {
    high: new Fifo(),
    normal: new Fifo(),
    low: new Fifo(),
  };
  private readonly events = new EventHeap();
  private readonly picker: LevelPicker;
  private busy = 0;
  /** Slices taken from the normal and low queues now. */
  private lowerBusy = 0;
  private readonly asked: Record<StorePriority, number> = { high: 0, normal: 0, low: 0 };
  private readonly serving: Record<StorePriority, number> = { high: 0, normal: 0, low: 0 };
  /** Blind workers waiting out an empty draw. */
  private napping = 0;

  constructor(
    private readonly config: PoolConfig,
    stores: readonly PoolStore[],
    arrivals: readonly PoolArrival[],
    private readonly observer: PoolObserver = {},
  ) {
    this.picker = new LevelPicker(config.shares);
    for (const spec of stores)
      this.stores.set(spec.storeId, {
        spec,
        priority: spec.priority,
        backlog: [],
        head: 0,
        slots: 0,
        leases: 0,
      });
    for (const a of arrivals)
      this.events.push({ at: a.at, kind: 'arrive', storeId: a.storeId, tasks: a.tasks });
    for (const r of config.reprioritize ?? [])
      this.events.push({ at: r.at, kind: 'reprioritize', storeId: r.storeId, priority: r.priority });
  }

  /** Runs until nothing is left to do (or `untilMs`). */
  run(untilMs = Number.POSITIVE_INFINITY): void {
    while (this.events.size > 0) {
      const event = this.events.pop() as Event;
      if (event.at > untilMs) break;
      this.now = event.at;
      this.handle(event);
      this.dispatch();
    }
  }

  private handle(event: Event): void {
    const store = event.kind === 'wake' ? undefined : this.stores.get(event.storeId);
    switch (event.kind) {
      case 'arrive': {
        if (!store) return;
        for (let i = 0; i < event.tasks; i++) store.backlog.push(this.now);
        // Ingest: the store's first slot, if it holds none (coalescing: later tasks publish nothing).
        if (store.slots === 0) this.signal(store, 1);
        return;
      }
      case 'reprioritize':
        if (store) store.priority = event.priority;
        return;
      case 'wake':
        this.napping--;
        return;
      case 'end': {
        if (!store) return;
        this.busy--;
        if (event.level !== 'high') this.lowerBusy--;
        this.serving[event.storeLevel]--;
        store.leases--;
        this.picker.end(event.charge, this.now - event.start);
        this.observer.slice?.({
          storeId: store.spec.storeId,
          level: event.level,
          start: event.start,
          end: this.now,
        });
        if (store.backlog.length - store.head > 0) {
          // Requeue: the same slot, at the back of its level's queue, on the store's level *now*.
          this.publish(store);
        } else {
          store.slots--;
        }
        return;
      }
    }
  }

  /** Issues a slot if the store holds fewer than `limit`, and publishes its attention. */
  private signal(store: StoreState, limit: number): void {
    if (store.slots >= limit) return;
    store.slots++;
    this.publish(store);
  }

  private publish(store: StoreState): void {
    const message: AttentionMessage = {
      v: 1,
      storeId: store.spec.storeId,
      slotId: `${store.spec.storeId}#${store.slots}`,
      reason: 'requeue',
      issuedAt: this.now,
      ...(this.config.choice === 'single-queue' ? {} : { priority: store.priority }),
    };
    const queue = attentionLevelOf(message);
    this.queues[queue].push({ storeId: store.spec.storeId, storeLevel: store.priority });
    this.asked[store.priority]++;
  }

  private waiting(): Record<StorePriority, number> {
    return { high: this.queues.high.length, normal: this.queues.normal.length, low: this.queues.low.length };
  }

  private withWork(): StorePriority[] {
    return STORE_PRIORITIES.filter((level) => this.queues[level].length > 0);
  }

  private choose(): StorePriority | undefined {
    const withWork = this.withWork();
    switch (this.config.choice) {
      case 'shares':
        return this.picker.pick(
          eligibleLevels(withWork, {
            workers: this.config.workers,
            lowerBusy: this.lowerBusy,
            headroom: this.config.highHeadroom ?? 0,
          }),
        );
      case 'single-queue':
      case 'headroom-ignored':
        return this.picker.pick(withWork);
      case 'strict':
        return withWork[0];
      case 'blind': {
        // Draws a level by its share whether or not it has work, and waits when the draw comes up empty.
        const r = (this.config.random ?? Math.random)() * 100;
        const { high, normal } = this.config.shares;
        return r < high ? 'high' : r < high + normal ? 'normal' : 'low';
      }
    }
  }

  private dispatch(): void {
    while (this.busy + this.napping < this.config.workers && this.withWork().length > 0) {
      const level = this.choose();
      // Only the headroom's workers are free, and high has nothing: they stay free for it.
      if (level === undefined) break;
      const next = this.queues[level].shift();
      if (next === undefined) {
        this.napping++;
        this.events.push({ at: this.now + (this.config.blindWaitMs ?? 1_000), kind: 'wake' });
        continue;
      }
      this.asked[next.storeLevel]--;
      this.startSlice(this.stores.get(next.storeId) as StoreState, level, next.storeLevel);
    }
    this.observer.settled?.(this.now, this.busy, this.waiting(), this.asked, this.serving);
  }

  private startSlice(store: StoreState, level: StorePriority, storeLevel: StorePriority): void {
    const { spec } = store;
    this.busy++;
    if (level !== 'high') this.lowerBusy++;
    this.serving[storeLevel]++;
    store.leases++;
    this.observer.leases?.(spec.storeId, store.leases, spec.maxConsumers);
    this.observer.started?.(spec.storeId, level, storeLevel, this.now);
    const charge = this.picker.begin(level);
    const start = this.now;
    let t = start + this.config.invokeMs;
    let taken = 0;
    const callMs = this.config.callMs(spec.storeId);
    while (
      taken < spec.maxMessagesPerSlice &&
      store.backlog.length - store.head > 0 &&
      t + callMs <= start + this.config.invokeMs + spec.maxSliceMs
    ) {
      const acceptedAt = store.backlog[store.head++] as number;
      t += callMs;
      taken++;
      this.observer.delivered?.(spec.storeId, acceptedAt, t);
    }
    if (store.head > 1024) {
      store.backlog = store.backlog.slice(store.head);
      store.head = 0;
    }
    const drained = store.backlog.length - store.head === 0;
    if (drained) t += this.config.emptyPollMs;
    // Fan-out, as slice.ts: after a full receive batch (10) with backlog left, one more slot up to the limit.
    else if (taken >= Math.min(10, spec.maxMessagesPerSlice)) this.signal(store, spec.maxConsumers);
    this.events.push({ at: t, kind: 'end', storeId: spec.storeId, level, storeLevel, charge, start });
  }
}
