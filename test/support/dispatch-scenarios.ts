import type { DispatchItem } from '../../lambdas/core/dispatch-model.js';
import { activeShardOf } from '../../lambdas/core/names.js';
import type { Clock, Conditional, DispatchState } from '../../lambdas/core/ports.js';
import { lateness, LATENESS_REACH_MS, pacedInterval, sharedPacer, spanOf } from '../../lambdas/core/rate.js';

/**
 * One table of dispatch-state operations and the outcome the protocol requires of each. It runs against
 * the DynamoDB adapter on DynamoDB Local (integration) and against the in-memory one (unit), so the
 * simulation's stand-in keeps the real conditions.
 */
const T = 1_800_000_000_000;
const okOf = (r: Conditional): boolean => r.ok;
const slotsOf = (item: DispatchItem | undefined) => item?.slots ?? {};
/** Simulated time from T: sleeping moves it on, nothing else does. */
const steppedClock = (): Clock => {
  let now = T;
  return { now: () => now, sleep: async (ms) => void (now += ms) };
};

export const dispatchScenarios: [string, (d: DispatchState, id: string) => Promise<unknown>, unknown][] = [
  [
    'issueSlot needs the item, then respects the limit',
    async (d, id) => {
      const before = okOf(await d.issueSlot(id, 'a', T, 1, T));
      await d.ensure(id);
      const first = okOf(await d.issueSlot(id, 'a', T, 1, T));
      const second = okOf(await d.issueSlot(id, 'b', T, 1, T));
      const item = await d.read(id);
      return { before, first, second, slots: slotsOf(item), active: item?.activeShard === activeShardOf(id) };
    },
    { before: false, first: true, second: false, slots: { a: { s: 'q', at: T } }, active: true },
  ],
  [
    'recordEnqueued bumps enqSeq and marks the store active once',
    async (d, id) => {
      await d.recordEnqueued(id, 3, T);
      const item = await d.recordEnqueued(id, 2, T + 5);
      return { enqSeq: item.enqSeq, activeSince: item.activeSince, slots: item.slots, fence: item.fence };
    },
    { enqSeq: 5, activeSince: T, slots: {}, fence: 0 },
  ],
  [
    'an ingest in flight keeps the store from going idle until it ends or its window passes',
    async (d, id) => {
      await d.beginEnqueue(id, 1, T, T + 12_000);
      await d.issueSlot(id, 'a', T, 1, T);
      const lease = await d.acquire(id, 'a', { now: T, expiresAt: T + 60_000, max: 1 });
      const seen = lease.ok ? lease.item.enqSeq : -1;
      const inFlight = okOf(await d.markIdle(id, 'a', 1, { seenSeq: seen, now: T + 1 }));
      await d.beginEnqueue(id, 2, T + 2, T + 12_002);
      const ended = await d.endEnqueue(id);
      const oneLeft = okOf(await d.markIdle(id, 'a', 1, { seenSeq: ended.enqSeq, now: T + 3 }));
      const afterWindow = okOf(await d.markIdle(id, 'a', 1, { seenSeq: ended.enqSeq, now: T + 12_003 }));
      const item = await d.read(id);
      return {
        seen,
        inFlight,
        ingesting: ended.ingesting,
        oneLeft,
        afterWindow,
        active: item?.activeShard,
        left: item?.ingesting,
      };
    },
    {
      seen: 1,
      inFlight: false,
      ingesting: 1,
      oneLeft: false,
      afterWindow: true,
      active: undefined,
      left: undefined,
    },
  ],
  [
    'a store whose ingests all ended may go idle at once',
    async (d, id) => {
      await d.beginEnqueue(id, 1, T, T + 12_000);
      await d.issueSlot(id, 'a', T, 1, T);
      await d.acquire(id, 'a', { now: T, expiresAt: T + 60_000, max: 1 });
      const ended = await d.endEnqueue(id);
      return { idle: okOf(await d.markIdle(id, 'a', 1, { seenSeq: ended.enqSeq, now: T + 1 })) };
    },
    { idle: true },
  ],
  [
    'endEnqueueIssuing ends the ingest and issues the slot in one write, only while the store holds none',
    async (d, id) => {
      const begun = await d.beginEnqueue(id, 1, T, T + 12_000);
      await d.beginEnqueue(id, 2, T + 1, T + 12_001);
      const first = await d.endEnqueueIssuing(id, 'a', T + 2, T + 2);
      // The second ingest finds the first one's slot: refused, nothing written, and it ends as for a busy store.
      const second = await d.endEnqueueIssuing(id, 'b', T + 3, T + 3);
      const unchanged = await d.read(id);
      const ended = await d.endEnqueue(id);
      return {
        begun: { slots: begun.slots, enqSeq: begun.enqSeq, ingesting: begun.ingesting },
        first: first.ok && {
          slots: first.item.slots,
          enqSeq: first.item.enqSeq,
          ingesting: first.item.ingesting,
        },
        second: !second.ok && second.current?.slots,
        unchanged: { enqSeq: unchanged?.enqSeq, ingesting: unchanged?.ingesting },
        ended: { slots: ended.slots, enqSeq: ended.enqSeq, ingesting: ended.ingesting },
        active: ended.activeShard === activeShardOf(id) && ended.activeSince === T,
      };
    },
    {
      begun: { slots: {}, enqSeq: 1, ingesting: 1 },
      first: { slots: { a: { s: 'q', at: T + 2 } }, enqSeq: 4, ingesting: 1 },
      second: { a: { s: 'q', at: T + 2 } },
      unchanged: { enqSeq: 4, ingesting: 1 },
      ended: { slots: { a: { s: 'q', at: T + 2 } }, enqSeq: 5, ingesting: 0 },
      active: true,
    },
  ],
  [
    'acquire turns a due queued slot into a lease with the next fence, once',
    async (d, id) => {
      await d.recordEnqueued(id, 1, T);
      await d.issueSlot(id, 'a', T + 60_000, 2, T);
      const early = okOf(await d.acquire(id, 'a', { now: T, expiresAt: T + 30_000, max: 2 }));
      const due = okOf(await d.acquire(id, 'a', { now: T + 60_000, expiresAt: T + 90_000, max: 2 }));
      const again = okOf(await d.acquire(id, 'a', { now: T + 60_000, expiresAt: T + 90_000, max: 2 }));
      const item = await d.read(id);
      return { early, due, again, slot: slotsOf(item)['a'], fence: item?.fence };
    },
    { early: false, due: true, again: false, slot: { s: 'l', at: T + 90_000, f: 1 }, fence: 1 },
  ],
  [
    'acquire refuses a store holding more slots than its (lowered) limit; dropQueued(ifOver) shrinks it',
    async (d, id) => {
      await d.ensure(id);
      await d.issueSlot(id, 'a', T, 3, T);
      await d.issueSlot(id, 'b', T, 3, T);
      const over = okOf(await d.acquire(id, 'a', { now: T, expiresAt: T + 1, max: 1 }));
      const drop = okOf(await d.dropQueued(id, 'a', 1));
      const dropAgain = okOf(await d.dropQueued(id, 'b', 1));
      const acquired = okOf(await d.acquire(id, 'b', { now: T, expiresAt: T + 1, max: 1 }));
      return { over, drop, dropAgain, acquired };
    },
    { over: false, drop: true, dropAgain: false, acquired: true },
  ],
  [
    'markIdle is refused while enqSeq moved, another slot exists or a wake is pending; then removes the active mark',
    async (d, id) => {
      await d.recordEnqueued(id, 1, T);
      await d.issueSlot(id, 'a', T, 2, T);
      await d.acquire(id, 'a', { now: T, expiresAt: T + 30_000, max: 2 });
      await d.recordEnqueued(id, 1, T);
      const movedSeq = okOf(await d.markIdle(id, 'a', 1, { seenSeq: 1, now: T }));
      await d.issueSlot(id, 'b', T, 2, T);
      const shared = okOf(await d.markIdle(id, 'a', 1, { seenSeq: 2, now: T }));
      await d.dropQueued(id, 'b');
      await d.deferWake(id, T + 10_000);
      const waking = okOf(await d.markIdle(id, 'a', 1, { seenSeq: 2, now: T }));
      const wrongFence = okOf(await d.markIdle(id, 'a', 9, { seenSeq: 2, now: T + 10_000 }));
      const idle = okOf(await d.markIdle(id, 'a', 1, { seenSeq: 2, now: T + 10_000 }));
      const item = await d.read(id);
      return {
        movedSeq,
        shared,
        waking,
        wrongFence,
        idle,
        slots: item?.slots,
        active: item?.activeShard,
        idleSeq: item?.idleSeq,
      };
    },
    {
      movedSeq: false,
      shared: false,
      waking: false,
      wrongFence: false,
      idle: true,
      slots: {},
      active: undefined,
      idleSeq: 2,
    },
  ],
  [
    'requeue and release need the lease fence; requeue keeps the pacing time',
    async (d, id) => {
      await d.recordEnqueued(id, 1, T);
      await d.issueSlot(id, 'a', T, 1, T);
      await d.acquire(id, 'a', { now: T, expiresAt: T + 30_000, max: 1 });
      const wrong = okOf(await d.requeue(id, 'a', 2, { dueAt: T + 1, max: 1, nextCallAt: T + 2 }));
      const right = okOf(
        await d.requeue(id, 'a', 1, { dueAt: T + 1, max: 1, nextCallAt: T + 2, headSentAt: T - 5 }),
      );
      const releaseQueued = okOf(await d.release(id, 'a', 1));
      const item = await d.read(id);
      return { wrong, right, releaseQueued, slot: slotsOf(item)['a'], headSentAt: item?.headSentAt };
    },
    {
      wrong: false,
      right: true,
      releaseQueued: false,
      slot: { s: 'q', at: T + 1, n: T + 2 },
      headSentAt: T - 5,
    },
  ],
  [
    'a hand-off requeue (to the confirm queue) counts no republished attention; a turn does',
    async (d, id) => {
      await d.recordEnqueued(id, 1, T);
      await d.issueSlot(id, 'a', T, 1, T);
      await d.acquire(id, 'a', { now: T, expiresAt: T + 30_000, max: 1 });
      await d.requeue(id, 'a', 1, { dueAt: T, max: 1, nextCallAt: T, handoff: true, throttled: true });
      const afterHandoff = await d.read(id);
      await d.acquire(id, 'a', { now: T, expiresAt: T + 30_000, max: 1 });
      await d.requeue(id, 'a', 2, { dueAt: T, max: 1, nextCallAt: T });
      const afterTurn = await d.read(id);
      return {
        handoff: [afterHandoff?.nRepublished, afterHandoff?.nThrottled, slotsOf(afterHandoff)['a']?.s],
        turn: [afterTurn?.nRepublished, afterTurn?.nThrottled, slotsOf(afterTurn)['a']?.s],
      };
    },
    { handoff: [undefined, undefined, 'q'], turn: [1, undefined, 'q'] },
  ],
  [
    'deferWake only ever raises wakeAt',
    async (d, id) => {
      await d.ensure(id);
      await d.deferWake(id, T + 100);
      await d.deferWake(id, T + 50);
      const low = (await d.read(id))?.wakeAt;
      await d.deferWake(id, T + 200);
      return { low, high: (await d.read(id))?.wakeAt };
    },
    { low: T + 100, high: T + 200 },
  ],
  [
    'reclaim turns only the expected lease back into a queued slot; noteResend counts in order',
    async (d, id) => {
      await d.recordEnqueued(id, 1, T);
      await d.issueSlot(id, 'a', T, 1, T);
      await d.acquire(id, 'a', { now: T, expiresAt: T + 30_000, max: 1 });
      const wrong = okOf(await d.reclaim(id, 'a', 7, T + 40_000));
      const right = okOf(await d.reclaim(id, 'a', 1, T + 40_000));
      const skip = okOf(await d.noteResend(id, 'a', 1, T + 40_000));
      const moved = okOf(await d.noteResend(id, 'a', 0, T)); // read before the slot was re-queued
      const first = okOf(await d.noteResend(id, 'a', 0, T + 40_000));
      const stale = okOf(await d.noteResend(id, 'a', 0, T + 40_000));
      const second = okOf(await d.noteResend(id, 'a', 1, T + 40_000));
      return { wrong, right, skip, moved, first, stale, second, slot: slotsOf(await d.read(id))['a'] };
    },
    {
      wrong: false,
      right: true,
      skip: false,
      moved: false,
      first: true,
      stale: false,
      second: true,
      slot: { s: 'q', at: T + 40_000, r: 2 },
    },
  ],
  [
    'listActive pages through the active stores of a shard',
    async (d, id) => {
      const shard = activeShardOf(id);
      await d.recordEnqueued(id, 1, T);
      const seen = new Set<string>();
      let cursor: string | undefined;
      do {
        const page = await d.listActive(shard, cursor, 1);
        page.storeIds.forEach((s) => seen.add(s));
        cursor = page.cursor;
      } while (cursor);
      return seen.has(id);
    },
    true,
  ],
  [
    'the rate schedule restarts only when it lags the clock, advances atomically, and idle carries the pace',
    async (d, id) => {
      await d.recordEnqueued(id, 1, T);
      const restarted = await d.restartTat(id, T, 200, 1);
      const ahead = await d.restartTat(id, T + 100, 200, 1);
      const advanced = (await d.advanceTat(id, 200, 1)).tat;
      const lagging = await d.restartTat(id, T + 1_000, 200, 1);
      await d.issueSlot(id, 'a', T, 1, T);
      await d.acquire(id, 'a', { now: T, expiresAt: T + 30_000, max: 1 });
      await d.markIdle(id, 'a', 1, { seenSeq: 1, now: T, tat: T + 9_000 });
      return { restarted, ahead, advanced, lagging, tat: (await d.read(id))?.tat };
    },
    {
      // A restart hands back the schedule as it left it: its write count, and the calls reserved on it.
      restarted: { tat: T + 200, seq: 1, calls: 1 },
      ahead: undefined,
      advanced: T + 400,
      lagging: { tat: T + 1_200, seq: 3, calls: 3 },
      tat: T + 9_000,
    },
  ],
  [
    'the oldest-task estimate (the active index sort key) starts at activation, follows each slice, leaves with idle',
    async (d, id) => {
      await d.recordEnqueued(id, 1, T);
      await d.recordEnqueued(id, 1, T + 500); // a later task does not make the backlog younger
      const activated = (await d.read(id))?.headSentAt;
      await d.issueSlot(id, 'a', T, 1, T);
      await d.acquire(id, 'a', { now: T, expiresAt: T + 30_000, max: 1 });
      await d.requeue(id, 'a', 1, { dueAt: T, max: 1, nextCallAt: T, headSentAt: T + 400 });
      const afterSlice = (await d.read(id))?.headSentAt;
      await d.acquire(id, 'a', { now: T, expiresAt: T + 30_000, max: 1 });
      await d.markIdle(id, 'a', 2, { seenSeq: 2, now: T + 1_000 });
      const idle = await d.read(id);
      return { activated, afterSlice, idle: idle?.headSentAt, shard: idle?.activeShard };
    },
    { activated: T, afterSlice: T + 400, idle: undefined, shard: undefined },
  ],
  [
    'returnTat gives a refused reservation back only while no other write moved the schedule, and only once',
    async (d, id) => {
      await d.recordEnqueued(id, 1, T);
      await d.restartTat(id, T, 200, 1); // tat T + 200
      const mine = await d.advanceTat(id, 200, 1); // instant T + 200, tat T + 400
      const back = await d.returnTat(id, { tat: mine.tat, seq: mine.seq as number }, 200, 1);
      const again = await d.returnTat(id, { tat: mine.tat, seq: mine.seq as number }, 200, 1);
      const afterBack = (await d.read(id))?.tat;
      const first = await d.advanceTat(id, 200, 1); // instant T + 200 again, tat T + 400
      await d.advanceTat(id, 200, 1); // another consumer reserves after it: tat T + 600
      const overtaken = await d.returnTat(id, { tat: first.tat, seq: first.seq as number }, 200, 1);
      const held = await d.advanceTat(id, 200, 1); // tat T + 800
      await d.holdTat(id, T + 5_000);
      const afterHold = await d.returnTat(id, { tat: held.tat, seq: held.seq as number }, 200, 1);
      return { back, again, afterBack, overtaken, afterHold, tat: (await d.read(id))?.tat };
    },
    { back: true, again: false, afterBack: T + 200, overtaken: false, afterHold: false, tat: T + 5_000 },
  ],
  [
    'a block write reserves several instants at once; only its unused tail goes back, only while it is the last write',
    async (d, id) => {
      await d.recordEnqueued(id, 1, T);
      await d.restartTat(id, T, 200, 1); // tat T + 200
      const block = await d.advanceTat(id, 5 * 200, 5); // five instants T + 200 … T + 1000, tat T + 1200
      // Two of them used: the tail of three goes back, once.
      const tail = await d.returnTat(id, { tat: block.tat, seq: block.seq as number }, 3 * 200, 3);
      const again = await d.returnTat(id, { tat: block.tat, seq: block.seq as number }, 3 * 200, 3);
      const afterTail = (await d.read(id))?.tat;
      const next = await d.advanceTat(id, 4 * 200, 4); // tat T + 1400
      await d.advanceTat(id, 200, 1); // another consumer reserves after it: tat T + 1600
      const overtaken = await d.returnTat(id, { tat: next.tat, seq: next.seq as number }, 2 * 200, 2);
      // The real pacer through this store: a block of three instants for three messages, one write, paced
      // 200 ms apart. Then another consumer reserves two instants (tat T + 2600); the next block (three, sized
      // for a deadline at T + 2800 from where this lease left the schedule) lands after them: its first call
      // goes, the deadline refuses the second, and the two unused instants go back.
      const clock = steppedClock();
      const pacer = sharedPacer(d, id, 200, clock);
      const starts: number[] = [];
      for (let inHand = 3; inHand > 0; inHand--)
        if (await pacer.acquire(T + 60_000, inHand)) starts.push(clock.now() - T);
      await d.advanceTat(id, 2 * 200, 2);
      if (await pacer.acquire(T + 2_800, 3)) starts.push(clock.now() - T);
      const refused = !(await pacer.acquire(T + 2_800, 2));
      return {
        tail,
        again,
        afterTail,
        overtaken,
        starts,
        refused,
        blockedUntil: pacer.blockedUntil - T,
        tat: (await d.read(id))?.tat,
      };
    },
    {
      tail: true,
      again: false,
      afterTail: T + 600,
      overtaken: false,
      starts: [1_600, 1_800, 2_000, 2_600],
      refused: true,
      blockedUntil: 2_800,
      tat: T + 2_800,
    },
  ],
  [
    'at a paced spacing (1,000/s: instants 1.021 ms apart) a block write’s unused tail still goes back',
    async (d, id) => {
      // Another consumer keeps the schedule 5.105 ms ahead (five instants): the real pacer's restart is refused
      // and it advances a block of ten after them (one ADD of a fractional span). Its first call goes; the
      // deadline refuses the second, and the nine unused instants go back: a give-back conditional on the `tat`
      // the block write answered, which a span with more digits than a double keeps would never match again.
      const step = pacedInterval(1, true);
      await d.recordEnqueued(id, 1, T);
      await d.restartTat(id, T, spanOf(5, step), 5, lateness(step));
      const clock = steppedClock();
      const pacer = sharedPacer(d, id, step, clock);
      const called = await pacer.acquire(T + 60_000, 10);
      const refused = !(await pacer.acquire(clock.now(), 9));
      const tat = (await d.read(id))?.tat as number;
      return { called, refused, tatUs: Math.round((tat - T) * 1_000) };
    },
    { called: true, refused: true, tatUs: 6_126 },
  ],
  [
    'holdTat raises the schedule to a 429’s Retry-After, never lowers it, and creates no item',
    async (d, id) => {
      await d.holdTat(id, T + 30_000);
      const absent = await d.read(id);
      await d.recordEnqueued(id, 1, T);
      await d.holdTat(id, T + 30_000);
      await d.holdTat(id, T + 10_000);
      const held = (await d.read(id))?.tat;
      const next = (await d.advanceTat(id, 200, 1)).tat;
      return { absent: absent === undefined, held, next };
    },
    { absent: true, held: T + 30_000, next: T + 30_200 },
  ],
  [
    'a hold inside the reserved schedule makes a give-back of a block reserved before it fail (tat stays past it)',
    async (d, id) => {
      await d.recordEnqueued(id, 1, T);
      // Two instants, T and T + 1 s: the schedule ends at T + 2 s. A 429 holds the store until T + 1.5 s.
      const block = (await d.restartTat(id, T, 2_000, 2)) as { tat: number; seq: number };
      await d.holdTat(id, T + 1_500);
      // The block's second instant (T + 1 s) given back would put the next reservation inside the hold.
      const givenBack = await d.returnTat(id, { tat: block.tat, seq: block.seq }, 1_000, 1);
      const next = (await d.advanceTat(id, 1_000, 1)).tat;
      return { givenBack, next };
    },
    { givenBack: false, next: T + 3_000 },
  ],
  [
    'noteRate sets the learnt rate only over the state the caller saw, creates no item, and rides advanceTat',
    async (d, id) => {
      const header = { why: 'header' as const, r: 3, at: T };
      const absent = (await d.noteRate(id, header, undefined)).ok;
      await d.recordEnqueued(id, 1, T);
      const first = (await d.noteRate(id, header, undefined)).ok;
      const backoff = { why: 'backoff' as const, r: 1.5, c: 3, at: T + 1_000 };
      const stale = (await d.noteRate(id, backoff, undefined)).ok;
      const next = (await d.noteRate(id, backoff, T)).ok;
      const reserved = await d.advanceTat(id, 200, 1);
      return { absent, first, stale, next, rate: reserved.rate };
    },
    {
      absent: false,
      first: true,
      stale: false,
      next: true,
      rate: { why: 'backoff', r: 1.5, c: 3, at: T + 1_000 },
    },
  ],
  [
    'the per-store measures count republishes, resends, discards and blocks, and keep the last drain',
    async (d, id) => {
      const counters = (item: DispatchItem | undefined) => ({
        republished: item?.nRepublished,
        resent: item?.nResent,
        discarded: item?.nDiscarded,
        leaseBlocked: item?.nLeaseBlocked,
        throttled: item?.nThrottled,
        lastDrainMs: item?.lastDrainMs,
        lastIdleAt: item?.lastIdleAt,
      });
      // A counter is never created on an item that does not exist.
      await d.noteDiscarded(id);
      const before = await d.read(id);
      await d.recordEnqueued(id, 1, T);
      await d.issueSlot(id, 'a', T, 3, T);
      await d.acquire(id, 'a', { now: T, expiresAt: T + 30_000, max: 3 });
      await d.requeue(id, 'a', 1, { dueAt: T, max: 3, nextCallAt: T });
      await d.acquire(id, 'a', { now: T, expiresAt: T + 30_000, max: 3 });
      await d.requeue(id, 'a', 2, { dueAt: T + 5_000, max: 3, nextCallAt: T, throttled: true });
      const refused = okOf(await d.requeue(id, 'a', 2, { dueAt: T, max: 3, nextCallAt: T }));
      await d.noteResend(id, 'a', 0, T + 5_000);
      await d.issueSlot(id, 'b', T, 3, T);
      await d.dropQueued(id, 'b', 1);
      await d.issueSlot(id, 'c', T, 3, T);
      await d.dropQueued(id, 'c');
      await d.noteDiscarded(id);
      await d.acquire(id, 'a', { now: T + 5_000, expiresAt: T + 35_000, max: 3 });
      await d.markIdle(id, 'a', 3, { seenSeq: 1, now: T + 7_000, drainMs: 7_000 });
      return { before: before === undefined, refused, ...counters(await d.read(id)) };
    },
    {
      before: true,
      // A refused write counts nothing.
      refused: false,
      republished: 2,
      resent: 1,
      discarded: 3,
      leaseBlocked: 1,
      throttled: 1,
      lastDrainMs: 7_000,
      lastIdleAt: T + 7_000,
    },
  ],
  [
    'a redrive mark keeps the store from idling until the move it names ends; an error streak rides the slot',
    async (d, id) => {
      await d.beginRedrive(id, T);
      await d.issueSlot(id, 'a', T, 1, T);
      const seen = (await d.read(id))?.enqSeq ?? 0;
      await d.acquire(id, 'a', { now: T, expiresAt: T + 30_000, max: 1 });
      const idleWhileMoving = okOf(await d.markIdle(id, 'a', 1, { seenSeq: seen, now: T + 1 }));
      const endOther = okOf(await d.endRedrive(id, T - 1));
      const end = okOf(await d.endRedrive(id, T));
      const requeued = okOf(
        await d.requeue(id, 'a', 1, { dueAt: T + 5, max: 1, nextCallAt: T, errorStreak: 2 }),
      );
      const queued = slotsOf(await d.read(id))['a'];
      await d.acquire(id, 'a', { now: T + 5, expiresAt: T + 30_000, max: 1 });
      const leased = slotsOf(await d.read(id))['a'];
      const idle = okOf(await d.markIdle(id, 'a', 2, { seenSeq: seen, now: T + 6 }));
      return { idleWhileMoving, endOther, end, requeued, queued, leased, idle };
    },
    {
      idleWhileMoving: false,
      endOther: false,
      end: true,
      requeued: true,
      queued: { s: 'q', at: T + 5, n: T, e: 2 },
      leased: { s: 'l', at: T + 30_000, f: 2, n: T, e: 2 },
      idle: true,
    },
  ],
  [
    'a fan-out issues its slot only while its issuer holds its lease',
    async (d, id) => {
      await d.ensure(id);
      await d.issueSlot(id, 'a', T, 1, T);
      await d.acquire(id, 'a', { now: T, expiresAt: T + 30_000, max: 3 });
      const live = okOf(await d.issueSlot(id, 'b', T, 3, T, { slotId: 'a', fence: 1 }));
      const otherFence = okOf(await d.issueSlot(id, 'c', T, 3, T, { slotId: 'a', fence: 2 }));
      const queuedIssuer = okOf(await d.issueSlot(id, 'c', T, 3, T, { slotId: 'b', fence: 1 }));
      const noIssuer = okOf(await d.issueSlot(id, 'c', T, 3, T, { slotId: 'gone', fence: 1 }));
      await d.reclaim(id, 'a', 1, T + 31_000);
      const reclaimed = okOf(await d.issueSlot(id, 'c', T, 3, T, { slotId: 'a', fence: 1 }));
      return {
        live,
        otherFence,
        queuedIssuer,
        noIssuer,
        reclaimed,
        slots: Object.keys(slotsOf(await d.read(id))),
      };
    },
    {
      live: true,
      otherFence: false,
      queuedIssuer: false,
      noIssuer: false,
      reclaimed: false,
      slots: ['a', 'b'],
    },
  ],
  [
    "a lone consumer's requeue carries its pace to the store's schedule",
    async (d, id) => {
      await d.ensure(id);
      await d.issueSlot(id, 'a', T, 1, T);
      await d.acquire(id, 'a', { now: T, expiresAt: T + 30_000, max: 1 });
      // A shared block before it (a cap lowered to 1) called up to 500 ms late; the lone pace calls on time.
      await d.restartTat(id, T, 10, 1, 500);
      await d.requeue(id, 'a', 1, { dueAt: T + 10, max: 3, nextCallAt: T + 700, tat: T + 700 });
      const carried = await d.read(id);
      await d.acquire(id, 'a', { now: T + 10, expiresAt: T + 30_000, max: 3 });
      await d.requeue(id, 'a', 2, { dueAt: T + 20, max: 3, nextCallAt: T + 900 });
      return {
        carried: carried?.tat,
        late: carried?.tatLate,
        slot: slotsOf(carried)['a'],
        untouched: (await d.read(id))?.tat,
      };
    },
    { carried: T + 700, late: 0, slot: { s: 'q', at: T + 10, n: T + 700 }, untouched: T + 700 },
  ],
  [
    'a block of smaller lateness is placed the difference after a later-calling one; no smaller one follows at once',
    async (d, id) => {
      await d.recordEnqueued(id, 1, T);
      await d.restartTat(id, T, 10, 10, 500); // a lagging store's reach: instants to T + 10, calls up to 500 ms late
      const refused = await d.advanceTat(id, 5, 5, { ms: 50 });
      const seen = { tat: refused.tat, ...(refused.seq === undefined ? {} : { seq: refused.seq }) };
      const placed = await d.placeTat(id, seen, T + 10 + 450, 5, 5, 50);
      const stale = await d.placeTat(id, seen, T + 10 + 450, 5, 5, 50);
      const larger = await d.advanceTat(id, 5, 5, { ms: 100 });
      // Lags the clock at T + 500 (tat T + 470), but its last block calls later and ends within the reach's gap.
      const tooSoon = await d.restartTat(id, T + 500, 5, 5, 50);
      // Clear once the schedule ended the largest gap any lateness needs (LATENESS_REACH_MS − 50) before it.
      const clear = await d.restartTat(id, T + 470 + LATENESS_REACH_MS - 50, 5, 5, 50);
      const item = await d.read(id);
      return {
        refused: refused.refused,
        refusedAt: refused.tat - T,
        placed: (placed?.tat ?? 0) - T,
        stale: stale === undefined,
        larger: larger.tat - T,
        largerRefused: larger.refused,
        tooSoon: tooSoon === undefined,
        clear: (clear?.tat ?? 0) - T,
        late: item?.tatLate,
        calls: item?.tatCalls,
      };
    },
    {
      refused: { late: 500 },
      refusedAt: 10,
      placed: 465,
      stale: true,
      larger: 470,
      largerRefused: undefined,
      tooSoon: true,
      clear: 475 + LATENESS_REACH_MS - 50,
      late: 50,
      calls: 25,
    },
  ],
  [
    'a raise of lateness is refused while the schedule reaches past deepFrom, and needs no depth once taken',
    async (d, id) => {
      await d.recordEnqueued(id, 1, T);
      await d.restartTat(id, T, 1_000, 10, 50); // a store binding a second deep at the standard lateness
      const deep = await d.advanceTat(id, 10, 1, { ms: 500, deepFrom: T + 450 });
      const shallow = await d.advanceTat(id, 10, 1, { ms: 500, deepFrom: T + 1_000 });
      const again = await d.advanceTat(id, 10, 1, { ms: 500, deepFrom: T });
      return {
        deep: deep.refused,
        deepAt: deep.tat - T,
        shallow: shallow.tat - T,
        again: again.tat - T,
        late: (await d.read(id))?.tatLate,
      };
    },
    { deep: { late: 50 }, deepAt: 1_000, shallow: 1_010, again: 1_020, late: 500 },
  ],
  [
    'a schedule written before lateness was kept counts as LATENESS_CEILING_MS late',
    async (d, id) => {
      await d.recordEnqueued(id, 1, T);
      await d.restartTat(id, T, 10, 1); // no lateness: as the code before it wrote
      const smaller = await d.advanceTat(id, 5, 1, { ms: 50 });
      // As late as it, with the schedule leading the clock: not a raise (`deepFrom` does not refuse it).
      const ceiling = await d.advanceTat(id, 5, 1, { ms: 100, deepFrom: T });
      return { smaller: smaller.refused, ceiling: ceiling.tat - T, late: (await d.read(id))?.tatLate };
    },
    { smaller: {}, ceiling: 15, late: 100 },
  ],
];

/** Writes the item the code before f267a90 left for an active store: `activeShard`, no `headSentAt`. */
export type LegacyWriter = (storeId: string) => Promise<void>;

/**
 * The index backfill's two calls (issue #10's upgrade path), on items no port call writes: a store marked
 * active by the code before f267a90. Each adapter supplies the raw write; the ids share a prefix no other
 * test's ids have, and the scan reads the whole table in pages of 2 until it has passed every id.
 */
export const backfillScenario = async (d: DispatchState, legacy: LegacyWriter, prefix: string) => {
  const [old, idled, current] = [`${prefix}-a-old`, `${prefix}-b-idled`, `${prefix}-c-current`];
  await legacy(old);
  await legacy(idled);
  await d.recordEnqueued(current, 1, T);
  const listed: string[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const page = await d.listUnindexed(cursor, 2);
    listed.push(...page.storeIds.filter((id) => id.startsWith(prefix)));
    cursor = page.cursor;
    pages++;
  } while (cursor);
  // An item marked idle between the scan and the write stays idle.
  await d.issueSlot(idled, 'a', T, 1, T);
  await d.acquire(idled, 'a', { now: T, expiresAt: T + 60_000, max: 1 });
  await d.markIdle(idled, 'a', 1, { seenSeq: 1, now: T });
  const indexed = okOf(await d.indexActive(old, T + 7));
  const again = okOf(await d.indexActive(old, T + 8));
  const idledIndexed = okOf(await d.indexActive(idled, T + 9));
  const currentIndexed = okOf(await d.indexActive(current, T + 10));
  const listedAfter = (await d.listActive(activeShardOf(old), undefined, 1_000)).storeIds.includes(old);
  const item = await d.read(old);
  const idledItem = await d.read(idled);
  return {
    listed: listed.sort(),
    pagedMoreThanOnce: pages > 1,
    indexed,
    again,
    idledIndexed,
    currentIndexed,
    listedAfter,
    headSentAt: item?.headSentAt,
    idled: { shard: idledItem?.activeShard, head: idledItem?.headSentAt },
  };
};

export const backfillExpected = (prefix: string) => ({
  listed: [`${prefix}-a-old`, `${prefix}-b-idled`],
  pagedMoreThanOnce: true,
  indexed: true,
  again: false,
  idledIndexed: false,
  currentIndexed: false,
  listedAfter: true,
  headSentAt: 0,
  idled: { shard: undefined, head: undefined },
});
