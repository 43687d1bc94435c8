import { RecordingTelemetry } from '../lambdas/adapters/recording-telemetry.js';
import { ADAPTIVE_RULES, afterAnswer, effectiveRate } from '../lambdas/core/adaptive-rate.js';
import { PLAN_DEFAULTS, type Policy } from '../lambdas/core/plans.js';
import type {
  Clock,
  DeliveryOutcome,
  DispatchState,
  ReceivedMessage,
  TaskQueues,
} from '../lambdas/core/ports.js';
import { runSlice, type SliceDeps } from '../lambdas/core/slice.js';
import { MemoryDeliveryLog } from '../test/support/memory-delivery-log.js';
import { MemoryDispatchState } from '../test/support/memory-dispatch-state.js';
import { SLICE_T0, sliceStore, work } from '../test/unit/support/slice-fixtures.js';
import { rng } from './sim/engine.js';

/**
 * `npx tsx bench/adaptive-model.ts [--seeds N]`: the adaptive-rate benchmark's workload (bench/adaptive-rate.ts,
 * `--mode none`) in simulated time, deterministic per seed: the real `runSlice` (its pacer, the store's rate, its
 * 429 handling) of one pro store's three consumers, on the in-memory dispatch state, against a token-bucket
 * marketplace at 30 % → 15 % → 30 % of the policy rate (40 s phases, one second of burst, bare 429s with a
 * 1 s Retry-After). Latencies are drawn per call (DynamoDB 3–12 ms, SQS 5–15 ms, marketplace 19–23 ms), and a
 * slice restart (the requeue, attention, invocation and lease) takes 150–600 ms. It leaves out the real
 * stack's noise (a loaded machine's late wake-ups): what it is for is telling one design from another over
 * many seeds, where one bench run is one noisy sample. Prints the 429 share and the throughput from 10 s on.
 *
 * `MODEL_MARKET=first` or `=random` swaps the token bucket for a marketplace whose 429s no rate causes (issue #13,
 * ARCHITECTURE "Known gaps"): a 429 (Retry-After 1 s) on the first call of every task, or on 4 % of calls at
 * random, and no limit but the policy's; the throughput is then against the policy rate. The model's queue drops
 * what a slice re-sends (its backlog is endless), so a task held past its slice is not called again: under `first`
 * most 429s are new tasks' first calls, and the 429 share reads high. What it shows is the rate's collapse.
 *
 * `MODEL_SCOPE=store` or `=task` runs the store under that `throttleScope` (plans.ts) and gives re-sent copies back
 * to the receives once their delay has passed (before new tasks), so a task sent back after its 429 is called
 * again: the two scopes compared on the same marketplace.
 *
 * `MODEL_TRACE=1` prints each change of the store's rate as it happens: the rate at the 429, the sent-rate bound the
 * lease measured, the old and new limit estimates, and what the marketplace actually saw in the 10 s before.
 */
const PHASE_MS = 40_000;
const WARMUP_MS = 10_000;
const SHARES = [0.3, 0.15, 0.3];
const T0 = SLICE_T0;
/** The marketplace's 429s: a token bucket (the benchmark's), or ones that no rate causes. */
const MARKET = (process.env['MODEL_MARKET'] ?? 'bucket') as 'bucket' | 'first' | 'random';
/** The share of calls a `random` marketplace answers 429. */
const RANDOM_429_SHARE = 0.04;
/** The store's throttle scope; set, re-sent copies come back to the receives (see above). */
const SCOPE = process.env['MODEL_SCOPE'] as 'store' | 'task' | undefined;

/** Virtual time: sleepers wake in time order; each wake runs until every chain sleeps again. */
class VirtualClock implements Clock {
  current = T0;
  private timers: { at: number; seq: number; wake: () => void }[] = [];
  private seq = 0;
  now = (): number => this.current;
  sleep = (ms: number): Promise<void> =>
    new Promise((wake) => this.timers.push({ at: this.current + Math.max(0, ms), seq: this.seq++, wake }));
  async run(until: number): Promise<void> {
    for (;;) {
      await new Promise((r) => setImmediate(r));
      if (this.timers.length === 0) return;
      this.timers.sort((a, b) => a.at - b.at || a.seq - b.seq);
      const next = this.timers.shift() as (typeof this.timers)[number];
      if (next.at > until) return;
      this.current = next.at;
      next.wake();
    }
  }
}

/** Wraps every method of `inner` in a latency drawn per call (half before it applies, half after). */
const slowed = <T extends object>(inner: T, clock: VirtualClock, draw: () => number): T =>
  new Proxy(inner, {
    get: (target, property) => {
      const value = (target as Record<PropertyKey, unknown>)[property];
      if (typeof value !== 'function') return value;
      return async (...args: unknown[]) => {
        const ms = draw();
        await clock.sleep(ms / 2);
        const result = await (value as (...a: unknown[]) => unknown).apply(target, args);
        await clock.sleep(ms / 2);
        return result;
      };
    },
  });

export interface ModelResult {
  calls: number;
  throttled: number;
  ok: number;
  allowed: number;
}

export const runModel = async (seed: number): Promise<ModelResult> => {
  const random = rng(seed);
  const between = (lo: number, hi: number) => () => lo + random() * (hi - lo);
  const clock = new VirtualClock();
  const policy: Policy = {
    ...PLAN_DEFAULTS.pro,
    ratePerSecond: 20,
    maxConcurrentConsumers: 3,
    ...(SCOPE === undefined ? {} : { throttleScope: SCOPE }),
  };
  const store = sliceStore({ plan: 'pro' });
  const memory = new MemoryDispatchState();
  await memory.recordEnqueued('s1', 1, T0);
  for (const slot of ['a', 'b', 'c']) await memory.issueSlot('s1', slot, T0, 3, T0);
  const dispatch = slowed<DispatchState>(memory, clock, between(3, 12));
  let n = 0;
  const message = (): ReceivedMessage => {
    const i = n++;
    return { messageId: `m${i}`, receiptHandle: `r${i}`, body: work(i), receiveCount: 1, sentAt: T0 };
  };
  /** Copies re-sent (MODEL_SCOPE set): each comes back once its delay has passed. */
  const copies: { message: ReceivedMessage; visibleAt: number }[] = [];
  const returned = (maxMessages: number): ReceivedMessage[] => {
    const due = copies.filter((c) => c.visibleAt <= clock.now()).slice(0, maxMessages);
    for (const c of due) copies.splice(copies.indexOf(c), 1);
    return due.map((c) => c.message);
  };
  // A deep backlog: every receive answers as many as asked (copies due back first).
  const backlog: TaskQueues = {
    send: async () => undefined,
    sendBatch: async () => ({ failed: [] }),
    receive: async (_url, { maxMessages }) => {
      const back = SCOPE === undefined ? [] : returned(maxMessages);
      return [...back, ...Array.from({ length: maxMessages - back.length }, message)];
    },
    deleteBatch: async () => undefined,
    changeVisibility: async () => undefined,
    deadLetter: async () => undefined,
    resend: async (_url, messages, delaySeconds) => {
      if (SCOPE === undefined) return;
      for (const m of messages)
        copies.push({
          message: { ...(m as ReceivedMessage), messageId: `c${n++}`, receiptHandle: `rc${n}` },
          visibleAt: clock.now() + delaySeconds * 1000,
        });
    },
  };
  const tasks = slowed(backlog, clock, between(5, 15));
  const limitAt = (t: number) =>
    MARKET === 'bucket'
      ? policy.ratePerSecond *
        (SHARES[Math.min(SHARES.length - 1, Math.floor((t - T0) / PHASE_MS))] as number)
      : policy.ratePerSecond;
  const called = new Set<string>();
  const bucket = { tokens: limitAt(T0), at: T0 };
  const calls: { at: number; ok: boolean }[] = [];
  const callMs = between(19, 23);
  const deps: SliceDeps = {
    dispatch,
    tasks,
    attention: { publish: async () => undefined },
    marketplace: {
      deliver: async (request) => {
        const at = clock.now();
        const limit = limitAt(at);
        bucket.tokens = Math.min(limit, bucket.tokens + ((at - bucket.at) / 1000) * limit);
        bucket.at = at;
        const first = !called.has(request.idempotencyKey);
        called.add(request.idempotencyKey);
        const ok =
          MARKET === 'first'
            ? !first
            : MARKET === 'random'
              ? random() >= RANDOM_429_SHARE
              : bucket.tokens >= 1;
        if (ok && MARKET === 'bucket') bucket.tokens -= 1;
        calls.push({ at, ok });
        await clock.sleep(callMs());
        return ok
          ? ({ kind: 'ok', status: 200 } satisfies DeliveryOutcome)
          : ({ kind: 'throttled', status: 429, retryAfterSeconds: 1 } satisfies DeliveryOutcome);
      },
    },
    deliveries: new MemoryDeliveryLog(),
    clock,
    ids: { next: () => `id-${n++}` },
    telemetry: new RecordingTelemetry(),
    random,
    settings: { emptyPollSeconds: 1, marketplaceTimeoutMs: 5_000 },
    ...(process.env['MODEL_TRACE'] === undefined
      ? {}
      : {
          rateRules: {
            ...ADAPTIVE_RULES,
            afterAnswer: (state, answer, policyRate, now) => {
              const next = afterAnswer(state, answer, policyRate, now);
              if (next !== undefined) {
                const t = (now - T0) / 1000;
                // What the marketplace saw: the calls of the last 10 s (the sent-rate bound's window), per second.
                const truth = calls.filter((c) => c.at > now - 10_000 && c.at <= now).length / 10;
                process.stdout.write(
                  `  ${t.toFixed(1)}s limit ${limitAt(now)} current ${effectiveRate(state, policyRate, now).effective.toFixed(2)} sent ${answer.sentPerSecond?.toFixed(2)} c_old ${state?.c?.toFixed(2)} calls10s ${truth.toFixed(2)} -> r ${next.r.toFixed(2)} c ${next.c?.toFixed(2)}\n`,
                );
              }
              return next;
            },
          },
        }),
  };
  const end = T0 + PHASE_MS * SHARES.length;
  const consumer = async (slotId: string) => {
    let fence = 1;
    while (clock.now() < end) {
      const now = clock.now();
      const item = await memory.read('s1');
      const slice = await runSlice(deps, store, policy, {
        slotId,
        fence: fence++,
        seenSeq: 1,
        startedAt: now,
        expiresAt: now + 35_000,
        nextCallAt: now,
        slotsAtStart: 3,
        ...(item?.rate === undefined ? {} : { rate: item.rate }),
      });
      // The slot goes back on the attention queue, due at resumeAt; the next lease takes it after the round trip.
      await clock.sleep(Math.max(0, (slice.resumeAt ?? clock.now()) - clock.now()) + between(150, 600)());
    }
  };
  void consumer('a');
  void consumer('b');
  void consumer('c');
  await clock.run(end);
  const counted = calls.filter((c) => c.at >= T0 + WARMUP_MS && c.at < end);
  let allowed = 0;
  for (let t = T0 + WARMUP_MS; t < end; t += 100) allowed += limitAt(t) / 10;
  if (process.env['MODEL_PHASES'] !== undefined)
    process.stdout.write(
      SHARES.map((_, i) => {
        const from = Math.max(T0 + WARMUP_MS, T0 + i * PHASE_MS);
        const to = T0 + (i + 1) * PHASE_MS;
        const inPhase = counted.filter((c) => c.at >= from && c.at < to);
        const ok = inPhase.filter((c) => c.ok).length;
        return `p${i + 1} ${inPhase.length - ok}x ${((100 * ok) / ((limitAt(from) * (to - from)) / 1000)).toFixed(0)}%`;
      }).join(' ') + '  ',
    );
  return {
    calls: counted.length,
    throttled: counted.filter((c) => !c.ok).length,
    ok: counted.filter((c) => c.ok).length,
    allowed,
  };
};

const seeds = Number(process.argv[process.argv.indexOf('--seeds') + 1] ?? 10) || 10;
if (process.argv[1]?.endsWith('adaptive-model.ts')) {
  const shares: number[] = [];
  const throughputs: number[] = [];
  for (let seed = 1; seed <= seeds; seed++) {
    const r = await runModel(seed);
    shares.push(r.throttled / r.calls);
    throughputs.push(r.ok / r.allowed);
    process.stdout.write(
      `seed ${seed}: ${r.throttled} 429s of ${r.calls} (${((100 * r.throttled) / r.calls).toFixed(1)} %), throughput ${((100 * r.ok) / r.allowed).toFixed(1)} %\n`,
    );
  }
  const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
  const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
  process.stdout.write(
    `mean 429 share ${(100 * mean(shares)).toFixed(2)} % (worst ${(100 * (sorted(shares).at(-1) ?? 0)).toFixed(1)} %), mean throughput ${(100 * mean(throughputs)).toFixed(1)} % (worst ${(100 * (sorted(throughputs)[0] ?? 0)).toFixed(1)} %)\n`,
  );
}
