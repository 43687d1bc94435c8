import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { format, resolveConfig } from 'prettier';
import type { PipelineFigures } from './pipeline/report.js';
import { attentionShare, keepsCaps, scaleTargets, type TargetRow } from './sim/targets.js';
import type { SimOutcome } from './sim/part.js';

/**
 * bench/results/summary.json (issue #11): the headline figures of one `npm run bench`, machine-readable.
 * `scale.W<n>.<design>`: the scale simulation's small-store latency and whole monthly cost (requests +
 * compute, one basis for every design); `pipeline`: the real pipeline's figures; `targets`: each issue #11
 * target with its measured value and whether it is met. `npm run bench -- --sim-only` rewrites `scale`
 * and the simulation's targets and keeps the `pipeline` part of the previous summary (its `pipelineRunAt` says when).
 */
export interface ScaleDesignSummary {
  label: string;
  workers: number;
  smallP50Ms: number;
  smallP99Ms: number;
  /** One run a day, idle the rest of the month: requests and compute. */
  monthlyUsd: number;
  monthlyComputeUsd: number;
  idleMonthlyUsd: number;
  /** No store ever had more calls in flight than its plan's maxConcurrentConsumers. */
  keepsConcurrencyCaps: boolean;
  attentionOverheadShare?: number;
  /** Mean worker time a single-task activation held beyond its call and rate wait (attention designs). */
  singleTaskExtraMs?: number;
}

export interface Summary {
  generatedAt: string;
  quick: boolean;
  scale: Record<string, Record<string, ScaleDesignSummary>>;
  smallestWorkersForSmallP99Ms: { targetMs: number; workers: number | null; tried: SimOutcome['wSearch'] };
  /** `quick`: part 1 ran at its quick size (`--quick` or `--quick-pipeline`). */
  pipeline: (PipelineFigures & { pipelineRunAt: string; quick: boolean }) | null;
  targets: TargetRow[];
}

const finite = (v: number): number | null => (Number.isFinite(v) ? Math.round(v * 1e6) / 1e6 : null);

/** Rounds numbers to 6 decimals and turns NaN/Infinity/undefined into null, so the file stays valid, diffable JSON. */
const clean = (value: unknown): unknown => {
  if (typeof value === 'number') return finite(value);
  if (Array.isArray(value)) return value.map(clean);
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, clean(v)]));
  // A target that is reported, not judged (`met: undefined`), keeps its key as null.
  return value === undefined ? null : value;
};

export const scaleSummary = (outcome: SimOutcome): Summary['scale'] => {
  const scale: Summary['scale'] = {};
  for (const block of outcome.scale) {
    const designs: Record<string, ScaleDesignSummary> = {};
    for (const r of block.results) {
      designs[r.id] = {
        label: r.label,
        workers: r.workers,
        smallP50Ms: r.smallP50Ms,
        smallP99Ms: r.smallP99Ms,
        monthlyUsd: r.loadMonthDollars,
        monthlyComputeUsd: r.computeMonthDollars,
        idleMonthlyUsd: r.idleMonthDollars,
        keepsConcurrencyCaps: keepsCaps(r),
        ...(r.id.startsWith('attention')
          ? { attentionOverheadShare: attentionShare(r), singleTaskExtraMs: r.singleTaskExtraMs }
          : {}),
      };
    }
    scale[`W${block.workers}`] = designs;
  }
  return scale;
};

export const writeSummary = async (
  path: string,
  parts: {
    quick: boolean;
    outcome: SimOutcome;
    pipeline?: { figures: PipelineFigures; targets: TargetRow[]; quick: boolean };
  },
): Promise<void> => {
  const previous =
    parts.pipeline === undefined && existsSync(path)
      ? (JSON.parse(readFileSync(path, 'utf8')) as Partial<Summary>)
      : undefined;
  const now = new Date().toISOString();
  const pipeline: Summary['pipeline'] =
    parts.pipeline !== undefined
      ? { ...parts.pipeline.figures, pipelineRunAt: now, quick: parts.pipeline.quick }
      : (previous?.pipeline ?? null);
  const pipelineTargets =
    parts.pipeline?.targets ??
    (previous?.targets ?? []).filter((t) =>
      ['requestsPerTask', 'throughputVsCeiling', 'idleP99OverP50'].includes(t.id),
    );
  const found = parts.outcome.wSearch.find((x) => x.smallP99Ms <= parts.outcome.config.wSearchTargetMs);
  const summary: Summary = {
    generatedAt: now,
    quick: parts.quick,
    scale: scaleSummary(parts.outcome),
    smallestWorkersForSmallP99Ms: {
      targetMs: parts.outcome.config.wSearchTargetMs,
      workers: found?.workers ?? null,
      tried: parts.outcome.wSearch,
    },
    pipeline,
    targets: [...scaleTargets(parts.outcome), ...pipelineTargets],
  };
  const text = JSON.stringify(clean(summary), null, 2);
  writeFileSync(path, await format(text, { ...((await resolveConfig(path)) ?? {}), filepath: path }));
};
