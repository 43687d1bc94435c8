import { PLAN_NAMES } from '../../lambdas/core/plans.js';
import { dataPlaneRequests, type DesignResult } from './metrics.js';
import type { SimOutcome } from './part.js';

/**
 * Issue #11's targets that the scale simulation decides, computed once for simulation.md and for
 * bench/results/summary.json. A target is met or not by the measured figure; nothing is rounded into a pass.
 */
export interface TargetRow {
  id: string;
  target: string;
  /** The measured figure, in words. */
  result: string;
  /** undefined: reported, no pass/fail (e.g. the smallest W). */
  met: boolean | undefined;
  value: number;
}

/** The designs that keep each store within its plan's maxConcurrentConsumers (none went over in the run). */
export const keepsCaps = (r: DesignResult): boolean => r.overConcurrency === 0;

/** The issue's "attention overhead": attention signalling over SQS + DynamoDB requests. */
export const attentionShare = (r: DesignResult): number =>
  r.run.category.attention / dataPlaneRequests(r.run);

const ms = (v: number): string =>
  !Number.isFinite(v) ? 'n/a' : v >= 60_000 ? `${(v / 60_000).toFixed(1)} min` : `${Math.round(v)} ms`;

export const scaleTargets = (outcome: SimOutcome, workers = 100): TargetRow[] => {
  const block = outcome.scale.find((b) => b.workers === workers) ?? outcome.scale[0];
  if (block === undefined) return [];
  const w = block.workers;
  const get = (id: string) => block.results.find((r) => r.id === id);
  const aq = get('attention');
  const fifo = get('fifo');
  const rows: TargetRow[] = [];
  if (aq !== undefined && fifo !== undefined) {
    const ratio = aq.smallP99Ms / fifo.smallP99Ms;
    rows.push({
      id: 'smallP99VsFifo',
      target: `small-store p99 ≤ 2 × the shared FIFO design's (scale run, W = ${w})`,
      result: `${ms(aq.smallP99Ms)} vs ${ms(fifo.smallP99Ms)} = ${ratio.toFixed(1)}×`,
      met: ratio <= 2,
      value: ratio,
    });
  }
  if (aq !== undefined) {
    const capped = block.results
      .filter((r) => !r.id.startsWith('attention') && keepsCaps(r))
      .sort((a, b) => a.loadMonthDollars - b.loadMonthDollars)[0];
    if (capped !== undefined) {
      rows.push({
        id: 'monthlyVsCheapestCapped',
        target: `$/month (requests + compute) ≤ the cheapest design keeping per-store concurrency caps (scale run, W = ${w})`,
        result: `$${aq.loadMonthDollars.toFixed(2)} vs $${capped.loadMonthDollars.toFixed(2)} (${capped.label}) = ${(aq.loadMonthDollars / capped.loadMonthDollars).toFixed(2)}×`,
        met: aq.loadMonthDollars <= capped.loadMonthDollars,
        value: aq.loadMonthDollars / capped.loadMonthDollars,
      });
    }
    const batchOne = get('attention-batch-1');
    rows.push({
      id: 'singleTaskWorkerTime',
      target: `a single-task activation holds ≤ 100 ms of worker time beyond its marketplace call and rate wait (mean; its share of its invocation; scale run, W = ${w})`,
      result: `${ms(aq.singleTaskExtraMs)}${batchOne !== undefined ? ` (one attention per invocation: ${ms(batchOne.singleTaskExtraMs)})` : ''}`,
      met: aq.singleTaskExtraMs <= 100,
      value: aq.singleTaskExtraMs,
    });
    const share = attentionShare(aq);
    rows.push({
      id: 'attentionOverhead',
      target: `attention overhead ≤ 5% of SQS + DynamoDB requests (scale run, W = ${w})`,
      result: `${(100 * share).toFixed(1)}%`,
      met: share <= 0.05,
      value: share,
    });
  }
  const probe = outcome.fairness.byDesign.attention ?? {};
  const indices = PLAN_NAMES.map((p) => probe[p]?.index ?? NaN);
  const worst = Math.min(...indices.filter((v) => Number.isFinite(v)));
  rows.push({
    id: 'jainPerPlan',
    target: `Jain ≥ 0.95 per plan (fairness probe, W = ${outcome.config.backlogWorkers})`,
    result: PLAN_NAMES.map((p, i) => `${p} ${(indices[i] as number).toFixed(3)}`).join(', '),
    met: worst >= 0.95,
    value: worst,
  });
  const found = outcome.wSearch.find((x) => x.smallP99Ms <= outcome.config.wSearchTargetMs);
  const tried = outcome.wSearch.map((x) => `W = ${x.workers}: ${ms(x.smallP99Ms)}`).join('; ');
  rows.push({
    id: 'smallestW',
    target: `smallest W with small-store p99 ≤ ${outcome.config.wSearchTargetMs} ms (scale run)`,
    result:
      found === undefined
        ? `none up to W = ${outcome.wSearch[outcome.wSearch.length - 1]?.workers ?? 'n/a'} (${tried})`
        : `W = ${found.workers} (${tried})`,
    met: undefined,
    value: found?.workers ?? NaN,
  });
  return rows;
};
