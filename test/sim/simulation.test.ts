import { describe, expect, it } from 'vitest';
import { FIXED_SEED_COUNT, firstRejection, replayCommand } from '../../sim/catalogue.js';
import { RARE_VARIANTS, VARIANTS, variantByName } from '../../sim/variants.js';
import { runSeed, type Variant } from '../../sim/world.js';

/**
 * The deterministic simulation (sim/): the real core protocol under a seeded scheduler with simulated
 * SQS, DynamoDB, marketplace and clocks, checked against invariants 1–7, 9 (rate, Retry-After), 10
 * (version order), 12 (Lambda timeout > lease), 13 (paused means paused) and 14 (an acknowledged operator
 * change holds) and 15 (a redrive starts a fresh retry budget) after every step, and 8 (idle
 * costs nothing: every store idle within 20 simulated minutes of the last task settling) at the end.
 */
const asBuilt = variantByName('as-built') as Variant;

describe('deterministic simulation', () => {
  it(`keeps invariants 1–10 and 12–15 on seeds 1–${FIXED_SEED_COUNT} (the protocol as built)`, async () => {
    const failures: string[] = [];
    for (let seed = 1; seed <= FIXED_SEED_COUNT; seed++) {
      const result = await runSeed(seed, asBuilt);
      if (!result.ok)
        failures.push(
          `seed ${seed}: invariant ${result.violation?.invariant}: ${result.violation?.message} — replay: ${replayCommand(seed)}`,
        );
    }
    expect(failures).toEqual([]);
  });

  it('replays a seed exactly (same trace, same outcome)', async () => {
    const first = await runSeed(7, asBuilt, true);
    const second = await runSeed(7, asBuilt, true);
    expect(second.trace).toEqual(first.trace);
    expect(second.stats).toEqual(first.stats);
    expect(first.stats.steps).toBeGreaterThan(100);
  });

  it("injects the faults it claims to (crashes, lost attentions, zombies, hard errors, operator actions, two PATCHes of one store at once, setOverrides merges, unprocessed settles, upgrades from before f267a90, repeated calls after a timeout or crash, 429s under throttleScope 'task', spent window quotas, tasks dead-lettered again for exhausted retries, an empty check's other long poll handed back)", async () => {
    const totals = {
      crashes: 0,
      attentionsLost: 0,
      zombieStalls: 0,
      fencedWrites: 0,
      repeatsAfterTimeout: 0,
      repeatsAfterCrash: 0,
      duplicateTasks: 0,
      hardErrors: 0,
      hardErrorsApplied: 0,
      operatorActions: 0,
      storeWriteConflicts: 0,
      overrideMerges: 0,
      taskScopeThrottles: 0,
      quotaHolds: 0,
      unprocessedSettles: 0,
      legacyItems: 0,
      redriveBudgetChecks: 0,
      restsHandedBack: 0,
    };
    for (let seed = 1; seed <= 100; seed++) {
      const { stats } = await runSeed(seed, asBuilt);
      for (const key of Object.keys(totals) as (keyof typeof totals)[]) totals[key] += stats[key];
    }
    for (const [key, total] of Object.entries(totals)) expect(total, key).toBeGreaterThan(0);
  });

  // Invariant 13 as the code guarantees it: a slice reads the store again before a call once STORE_RECHECK_MS has
  // passed since its last read began, so one that read the store active may still call for less than that after
  // the pause lands, and no longer (seed 93: a pause mid-slice; 127 until session 23's failing-task stores moved its
  // interleaving, 17 until session 24's racing long polls of the empty check moved it, 76 until session 28's
  // end-and-issue write did).
  it('lets a slice that read the store before its pause call for less than a second more, and stays clean (seed 93)', async () => {
    const result = await runSeed(93, asBuilt);
    expect(result.ok).toBe(true);
    expect(result.stats.callsWhilePaused).toBeGreaterThan(0);
  });
});

describe('each deliberately broken variant is rejected by a seed of the fixed set, for the invariant it breaks', () => {
  it.each(VARIANTS.map((variant) => [variant.name, variant.breaks, variant] as const))(
    '%s (invariant %i)',
    async (_name, breaks, variant) => {
      const rejection = await firstRejection(variant);
      expect(rejection, `no seed in 1–${FIXED_SEED_COUNT} rejected ${variant.name}`).toBeDefined();
      expect(rejection?.result.violation?.invariant).toBe(breaks);
    },
  );
});

describe('broken variants rarer than the fixed seeds: rejected by the seeds that found them, which are clean as built', () => {
  it.each(
    RARE_VARIANTS.flatMap(({ variant, seeds }) =>
      seeds.map((seed) => [variant.name, seed, variant] as const),
    ),
  )('%s, seed %i', async (_name, seed, variant) => {
    const broken = await runSeed(seed, variant);
    expect(broken.violation?.invariant).toBe(variant.breaks);
    expect((await runSeed(seed, asBuilt)).ok).toBe(true);
  });
});

describe("a redrive's fresh budget (invariant 15)", () => {
  // The fixed set's first rejection of redrive-keeps-attempts (seed 10) is a client's repeated POST: a second copy
  // of a dead-lettered task, which gets the fresh budget too. Seed 31 meets it after the operator's redrive.
  it('rejects a redriven task dead-lettered again after one call (seed 31), and keeps the seed clean as built', async () => {
    const broken = await runSeed(31, variantByName('redrive-keeps-attempts') as Variant);
    expect(broken.violation?.invariant).toBe(15);
    expect(broken.stats.redriven).toBeGreaterThan(0);
    const built = await runSeed(31, asBuilt);
    expect(built.ok).toBe(true);
    expect(built.stats.redriveBudgetChecks).toBeGreaterThan(0);
  });
});

describe("the 429's throttle scope", () => {
  // A task sent back alone after its 429 (`throttleScope: 'task'`) had a duplicate copy later in the same slice
  // (an SQS duplicate), whose claim the 429's pending settle had freed: it was called 5.3 s inside the Retry-After.
  // The 429 now writes its Retry-After's end on the task's record (`retryAt`): no claim before it, so every copy waits.
  it('keeps seed 291, where a duplicate copy of a task sent back after its 429 was called inside the Retry-After, clean', async () => {
    expect((await runSeed(291, asBuilt)).ok).toBe(true);
  });

  // The same under the default scope, found in session 23's long run: the store's hold did not stop a block another
  // consumer had reserved before it, and that consumer held an SQS duplicate of the task the 429 answered, called
  // 6 s inside its Retry-After. The pending settle now carries `retryAt` under either scope.
  it("keeps seed 3126243, where a duplicate copy was called inside its 429's Retry-After under throttleScope 'store', clean", async () => {
    expect((await runSeed(3126243, asBuilt)).ok).toBe(true);
  });
});

describe('the wake-up races the simulation found (fixed in lambdas/core)', () => {
  // Race A: wakeAt was computed before SQS started the retried message's visibility timer and compared on
  // another worker's clock, so markIdle could pass while the task was still invisible (seed 181 at the time).
  it('keeps seed 181, which lost a wake-up before WAKE_MARGIN_MS, clean', async () => {
    expect((await runSeed(181, asBuilt)).ok).toBe(true);
  });

  // A zombie's throttle re-send landed after a 26 s stall, its late guard failed, and the error end guarded only
  // until its (pre-stall) receive's visibility: the next slice marked the store idle with the delayed copies on
  // their way. A failed hiding call or late guard now raises the error end's guard (slice.ts `hidden`).
  it('keeps seed 361626, which lost a wake-up when a late guard after a re-send failed, clean', async () => {
    expect((await runSeed(361626, asBuilt)).ok).toBe(true);
  });

  // Surplus attentions of one slot circulated (9 in flight) until attentions said which due time they announce.
  // Not a protocol bug: a surplus attention's lease taken 170 s after the drain stalled, and its reclaim's guard
  // (~17 min past the lease, as designed) put the store's idle 1 s past invariant 8's bound counted from the drain;
  // the bound now counts from the later of the drain and such a reclaim (sim/world.ts).
  it('keeps seed 574866, idle 17 min after a late zombie lease, clean', async () => {
    expect((await runSeed(574866, asBuilt)).ok).toBe(true);
  });

  it('keeps seed 156704, where surplus attentions of one slot circulated, clean', async () => {
    expect((await runSeed(156704, asBuilt)).ok).toBe(true);
  });

  // A stalled long poll (one of two side by side) answered "empty" 17 s after it looked; the store's guard
  // had expired meanwhile, and markIdle compared it with now: a message visible since was left in an idle
  // store (seeds 52622, 57657, 58360). tryIdle now compares the guards with the time the polls began.
  it.each([52622, 57657, 58360])('keeps seed %i, a stalled empty poll, clean', async (seed) => {
    expect((await runSeed(seed, asBuilt)).ok).toBe(true);
  });

  // Hard errors (issue #10): a receive or a hand-back that failed after a receive stalled past the lease left
  // messages hidden beyond the error path's guard (seeds 4734, 4776, 7790: lost wake-ups), and a slice error
  // after a 429 forgot its Retry-After (seeds 2020, 3073: calls ~5 s early). Found with the fixes reverted.
  // Seed 99123 (the 100,000-seed run): of the empty check's two long polls one failed while the other stalled
  // past the lease; the error's guard was counted before the stalled one hid its messages.
  it.each([4734, 4776, 7790, 2020, 3073, 99123])(
    'keeps seed %i, an error after a stall or a 429, clean',
    async (seed) => {
      expect((await runSeed(seed, asBuilt)).ok).toBe(true);
    },
  );

  // Session 13 (the 100,000-seed run after the stretched spacing): a lease reserved a block, learnt a lowered
  // rate from its answer and widened it with a second write; another consumer's 429 held the store between the
  // two, and the lease, keeping its first span, called inside the hold it had just seen (calls 7.7 s and 5.9 s
  // early). It now reserves again after the schedule's end (rate.ts `advance`). Both fail with the old branch.
  it.each([7013067, 7057230])(
    'keeps seed %i, a hold between a block and its widening, clean',
    async (seed) => {
      expect((await runSeed(seed, asBuilt)).ok).toBe(true);
    },
  );
});
