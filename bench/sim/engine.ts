/**
 * A small discrete-event engine: simulated time in milliseconds, a binary min-heap of timed callbacks
 * (ties broken by insertion order, so a run is deterministic), and the workload's arrivals merged in
 * from a pre-sorted array instead of being pushed onto the heap one by one.
 */
export type Action = () => void;

interface Ev {
  t: number;
  s: number;
  fn: Action;
}

export class EventHeap {
  private readonly items: Ev[] = [];
  private seq = 0;

  get size(): number {
    return this.items.length;
  }

  peekTime(): number {
    const top = this.items[0];
    return top === undefined ? Infinity : top.t;
  }

  push(t: number, fn: Action): void {
    const items = this.items;
    const ev: Ev = { t, s: this.seq++, fn };
    let i = items.length;
    items.push(ev);
    while (i > 0) {
      const p = (i - 1) >> 1;
      const parent = items[p] as Ev;
      if (parent.t < t || (parent.t === t && parent.s < ev.s)) break;
      items[i] = parent;
      i = p;
    }
    items[i] = ev;
  }

  pop(): Ev | undefined {
    const items = this.items;
    const top = items[0];
    const last = items.pop();
    if (top === undefined || last === undefined || items.length === 0) return top;
    const n = items.length;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      const r = l + 1;
      let c = l;
      const lc = items[l] as Ev;
      if (r < n) {
        const rc = items[r] as Ev;
        if (rc.t < lc.t || (rc.t === lc.t && rc.s < lc.s)) c = r;
      }
      const child = items[c] as Ev;
      if (last.t < child.t || (last.t === child.t && last.s < child.s)) break;
      items[i] = child;
      i = c;
    }
    items[i] = last;
    return top;
  }
}

/** A min-heap of integer ids keyed by a number (used for "oldest head message first" orders). */
export class KeyedHeap {
  private ids: number[] = [];
  private keys: number[] = [];

  get size(): number {
    return this.ids.length;
  }

  push(id: number, key: number): void {
    const ids = this.ids;
    const keys = this.keys;
    let i = ids.length;
    ids.push(id);
    keys.push(key);
    while (i > 0) {
      const p = (i - 1) >> 1;
      const pk = keys[p] as number;
      if (pk <= key) break;
      ids[i] = ids[p] as number;
      keys[i] = pk;
      i = p;
    }
    ids[i] = id;
    keys[i] = key;
  }

  /** Removes and returns the id with the smallest key, or -1 when empty. */
  pop(): number {
    const ids = this.ids;
    const keys = this.keys;
    if (ids.length === 0) return -1;
    const top = ids[0] as number;
    const lastId = ids.pop() as number;
    const lastKey = keys.pop() as number;
    const n = ids.length;
    if (n === 0) return top;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      const r = l + 1;
      let c = l;
      if (r < n && (keys[r] as number) < (keys[l] as number)) c = r;
      if (lastKey <= (keys[c] as number)) break;
      ids[i] = ids[c] as number;
      keys[i] = keys[c] as number;
      i = c;
    }
    ids[i] = lastId;
    keys[i] = lastKey;
    return top;
  }
}

/** A FIFO of integers with amortised O(1) push/shift. */
export class IntQueue {
  private buf: Int32Array;
  private head = 0;
  private tail = 0;

  constructor(capacity = 16) {
    this.buf = new Int32Array(Math.max(4, capacity));
  }

  get length(): number {
    return this.tail - this.head;
  }

  push(v: number): void {
    if (this.tail === this.buf.length) {
      const live = this.tail - this.head;
      if (live * 2 <= this.buf.length) {
        this.buf.copyWithin(0, this.head, this.tail);
      } else {
        const next = new Int32Array(this.buf.length * 2);
        next.set(this.buf.subarray(this.head, this.tail));
        this.buf = next;
      }
      this.head = 0;
      this.tail = live;
    }
    this.buf[this.tail++] = v;
  }

  shift(): number {
    if (this.head === this.tail) return -1;
    return this.buf[this.head++] as number;
  }
}

export class Engine {
  now = 0;
  readonly heap = new EventHeap();
  events = 0;

  at(t: number, fn: Action): void {
    this.heap.push(Math.max(t, this.now), fn);
  }

  after(ms: number, fn: Action): void {
    this.heap.push(this.now + Math.max(0, ms), fn);
  }

  /**
   * Runs until both the arrivals and the heap are exhausted (or `until`). `arrive(i)` is called for the
   * i-th arrival at `times[i]`; arrivals at the same instant as an event run first.
   */
  run(
    times: Float64Array,
    arrive: (i: number) => void,
    until = Infinity,
    onTick?: (now: number) => void,
  ): void {
    let next = 0;
    const n = times.length;
    let tick = 0;
    for (;;) {
      const ta = next < n ? (times[next] as number) : Infinity;
      const te = this.heap.peekTime();
      const t = Math.min(ta, te);
      if (t === Infinity || t > until) break;
      this.now = t;
      if (ta <= te) {
        arrive(next++);
      } else {
        const ev = this.heap.pop() as Ev;
        ev.fn();
      }
      this.events++;
      if (onTick !== undefined && ++tick === 200_000) {
        tick = 0;
        onTick(this.now);
      }
    }
  }
}

/** mulberry32: a tiny seeded PRNG, so every design sees the same workload and latency distribution. */
export const rng = (seed: number): (() => number) => {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
};
