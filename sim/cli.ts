import { replayCommand } from './catalogue.js';
import { runSeed } from './world.js';
import { VARIANTS, variantByName } from './variants.js';

/**
 * `npm run sim -- --seeds N [--from S] [--variant name] [--no-idle-tail]` runs N seeds and prints progress and a
 * summary (`--no-idle-tail`: stop each run when its tasks are settled, without the end-of-run idle check of
 * invariant 8, which doubles a seed's steps);
 * `npm run sim -- --seed S [--variant name]` replays one seed with its step trace.
 */
const args = process.argv.slice(2);
const option = (name: string): string | undefined => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
};
const flag = (name: string): boolean => args.includes(`--${name}`);

const variantName = option('variant');
if (variantName !== undefined && !variantByName(variantName)) {
  console.error(`unknown variant ${variantName}; known: ${VARIANTS.map((v) => v.name).join(', ')}`);
  process.exit(2);
}
const variant = variantName === undefined ? undefined : variantByName(variantName);

const single = option('seed');
if (single !== undefined) {
  const result = await runSeed(Number(single), variant, true);
  const tail = Number(option('tail') ?? (flag('full') ? Infinity : 400));
  const lines = result.trace.slice(Number.isFinite(tail) ? -tail : 0);
  if (lines.length < result.trace.length)
    console.log(`… (${result.trace.length - lines.length} earlier lines; --full for all)`);
  for (const line of lines) console.log(line);
  console.log(JSON.stringify(result.stats));
  if (result.ok) console.log(`seed ${result.seed}: ok`);
  else
    console.log(
      `seed ${result.seed}: VIOLATION of invariant ${result.violation?.invariant}: ${result.violation?.message}`,
    );
  process.exit(result.ok ? 0 : 1);
}

const count = Number(option('seeds') ?? 1000);
const from = Number(option('from') ?? 1);
const stopOnFirst = !flag('keep-going');
const started = Date.now();
let failures = 0;
let steps = 0;
let worstStranded = 0;
let worstFairShare = 0;
let worstRate = 0;
let worstAttentions = 0;
let worstAttentionsSeed = 0;
let rawDuplicates = 0;
let crashes = 0;
let workerTimeouts = 0;
/** Totals of the counters that show which edge faults a run exercised. */
const edges = {
  zombieStalls: 0,
  fencedWrites: 0,
  repeatsAfterTimeout: 0,
  repeatsAfterCrash: 0,
  repeatsAfterStall: 0,
  repeatsAfterError: 0,
  duplicateTasks: 0,
  hardErrors: 0,
  hardErrorsApplied: 0,
  operatorActions: 0,
  overrideMerges: 0,
  storeWriteConflicts: 0,
  taskScopeThrottles: 0,
  quotaHolds: 0,
  callsWhilePaused: 0,
  callsOverLoweredCap: 0,
  redriven: 0,
  stale: 0,
  unprocessedSettles: 0,
  restsHandedBack: 0,
  confirmHandoffs: 0,
  confirmTrickles: 0,
  reachBlocks: 0,
  lateLowerings: 0,
};
const idleTail = !flag('no-idle-tail');
for (let seed = from; seed < from + count; seed++) {
  const result = await runSeed(seed, variant, false, idleTail);
  steps += result.stats.steps;
  worstStranded = Math.max(worstStranded, result.stats.maxStrandedRatio);
  worstFairShare = Math.max(worstFairShare, result.stats.maxWaitSlicesRatio);
  worstRate = Math.max(worstRate, result.stats.maxRateRatio);
  if (result.stats.maxAttentionsPerSlot > worstAttentions) {
    worstAttentions = result.stats.maxAttentionsPerSlot;
    worstAttentionsSeed = seed;
  }
  rawDuplicates += result.stats.rawDuplicateSuccesses;
  crashes += result.stats.crashes;
  workerTimeouts += result.stats.workerTimeouts;
  for (const key of Object.keys(edges) as (keyof typeof edges)[]) edges[key] += result.stats[key];
  if (!result.ok) {
    failures++;
    console.log(
      `seed ${seed}: VIOLATION of invariant ${result.violation?.invariant}: ${result.violation?.message}\n  replay: ${replayCommand(seed, result.variant)}`,
    );
    if (stopOnFirst) break;
  }
  const done = seed - from + 1;
  if (done % 1000 === 0) {
    const secs = (Date.now() - started) / 1000;
    console.log(
      `${done}/${count} seeds, ${failures} failing, ${secs.toFixed(0)} s, ${(done / secs).toFixed(1)} seeds/s`,
    );
  }
}
const secs = (Date.now() - started) / 1000;
console.log(
  JSON.stringify({
    from,
    seeds: count,
    variant: variantName ?? null,
    failures,
    seconds: Number(secs.toFixed(1)),
    seedsPerSecond: Number((count / secs).toFixed(1)),
    steps,
    crashes,
    workerTimeouts,
    rawDuplicateSuccesses: rawDuplicates,
    ...edges,
    worstStrandedRatio: Number(worstStranded.toFixed(3)),
    worstFairShareRatio: Number(worstFairShare.toFixed(3)),
    worstRateRatio: Number(worstRate.toFixed(3)),
    worstAttentionsPerSlot: Number(worstAttentions.toFixed(2)),
    worstAttentionsSeed,
  }),
);
process.exit(failures > 0 ? 1 : 0);
