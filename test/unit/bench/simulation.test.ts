import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runSimulationPart, type SimulationPartResult } from '../../../bench/sim-main.js';
import { QUICK_CONFIG, type SimConfig } from '../../../bench/sim/part.js';
import { totalRequests } from '../../../bench/sim/metrics.js';
import { writeSummary, type Summary } from '../../../bench/summary.js';

/** A tiny workload: every part of the quick mode, in well under a second of CPU. */
const TINY: SimConfig = {
  ...QUICK_CONFIG,
  scale: {
    ...QUICK_CONFIG.scale,
    stores: 300,
    tasks: 5_000,
    loadSeconds: 60,
    campaignTasks: 1_000,
    campaignAtSeconds: 10,
    campaignSeconds: 2,
  },
  workers: [10],
  backlog: { smallStores: 50, smallRatePerSecond: 4, bigPlan: 'enterprise', minSeconds: 30, seed: 3 },
  backlogSizes: [0, 2_000],
  backlogWorkers: 20,
  fairness: {
    groups: [
      { plan: 'basic', stores: 20, tasks: 60 },
      { plan: 'pro', stores: 4, tasks: 200 },
      { plan: 'enterprise', stores: 2, tasks: 400 },
    ],
    arriveWithinSeconds: 2,
    seed: 5,
  },
  wSearch: [10, 40],
};

describe('simulation at scale (quick, tiny workload)', () => {
  let part: SimulationPartResult;
  beforeAll(async () => {
    part = await runSimulationPart({ config: TINY, write: false, quick: true });
  });
  const results = () => part.outcome.scale[0]?.results ?? [];
  const byId = (id: string) => {
    const r = results().find((x) => x.id === id);
    if (r === undefined) throw new Error(`no result for ${id}`);
    return r;
  };

  it('runs every design and writes nothing when asked not to', () => {
    expect(part.files).toEqual([]);
    expect(results().map((r) => r.id)).toEqual(
      expect.arrayContaining(['attention', 'per-store', 'fifo', 'grouped', 'scheduler', 'fair']),
    );
  });

  it('delivers every task in every design and every probe', () => {
    for (const r of results()) expect(r.delivered, r.id).toBe(r.total);
    for (const point of part.outcome.backlog)
      for (const [id, d] of Object.entries(point.byDesign))
        expect(d.delivered, `${id} @ ${point.backlog}`).toBe(d.total);
  });

  it('keeps every store within maxConcurrentConsumers calls in the attention queue (and the per-store consumer)', () => {
    expect(byId('attention').overConcurrency).toBe(0);
    expect(byId('per-store').overConcurrency).toBe(0);
  });

  it("prices a per-store consumer's idle month far above the attention queue's", () => {
    const aq = byId('attention');
    const perStore = byId('per-store');
    // Here 300 stores' pollers against the attention design's 4 queues (3 levels and the confirm queue) × 5 pollers
    // and its reconciler; the gap grows with the stores (50,000 in the scale run).
    expect(perStore.idleMonthDollars).toBeGreaterThan(5 * aq.idleMonthDollars);
    // 300 stores × 30 days × 86,400 s / 20 s long polls.
    expect(totalRequests(perStore.idle)).toBeCloseTo((300 * 30 * 86_400) / 20, -3);
    expect(byId('scheduler').idleMonthDollars).toBeGreaterThan(aq.idleMonthDollars);
  });

  it('keeps fairness indices and utilisations within [0, 1]', () => {
    for (const r of results()) {
      const indices = [r.fairness.overall, ...Object.values(r.fairness.windowed).map((w) => w.index)];
      for (const j of indices.filter((v) => Number.isFinite(v))) {
        expect(j).toBeGreaterThanOrEqual(0);
        expect(j).toBeLessThanOrEqual(1 + 1e-9);
      }
      expect(r.utilHeld).toBeGreaterThanOrEqual(0);
      expect(r.utilHeld).toBeLessThanOrEqual(1 + 1e-9);
      expect(r.utilCalls).toBeLessThanOrEqual(r.utilHeld + 1e-9);
    }
    for (const plans of Object.values(part.outcome.fairness.byDesign))
      for (const p of Object.values(plans)) {
        expect(p.index).toBeGreaterThan(0);
        expect(p.index).toBeLessThanOrEqual(1 + 1e-9);
      }
  });

  it('never lets a small store wait behind the whole backlog in the attention queue (unlike grouped queues)', () => {
    const point = part.outcome.backlog.find((b) => b.backlog === 2_000);
    const aq = point?.byDesign.attention?.p99 ?? Infinity;
    const grouped = point?.byDesign.grouped?.p99 ?? 0;
    expect(aq).toBeLessThan(2_000);
    expect(grouped).toBeGreaterThan(10 * aq);
  });

  it("prices every design's compute, not only the attention queue's (issue #11)", () => {
    for (const r of results()) {
      expect(r.lambdaGbSeconds, r.id).toBeGreaterThan(0);
      expect(r.computeMonthDollars, r.id).toBeGreaterThan(0);
      expect(r.loadMonthDollars, r.id).toBeGreaterThan(r.computeMonthDollars);
      expect(r.run.bucket.lambda, `${r.id} invocations`).toBeGreaterThan(0);
    }
  });

  it('searches W upward and stops at the first pool meeting the p99 target', () => {
    const tried = part.outcome.wSearch;
    expect(tried.length).toBeGreaterThan(0);
    const met = tried.findIndex((x) => x.smallP99Ms <= TINY.wSearchTargetMs);
    if (met >= 0) expect(met).toBe(tried.length - 1);
    expect(tried.map((x) => x.workers)).toEqual(TINY.wSearch.slice(0, tried.length));
  });

  it('writes summary.json with the issue #11 shape, and --sim-only keeps the previous pipeline part', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'aq-summary-')), 'summary.json');
    const pipeline = { requestsPerTask: 3.5, tasksPerSecond: 200 };
    writeFileSync(
      path,
      JSON.stringify({
        pipeline,
        targets: [{ id: 'requestsPerTask', target: 't', result: 'r', met: false, value: 3.5 }],
      }),
    );
    await writeSummary(path, { quick: true, outcome: part.outcome });
    const summary = JSON.parse(readFileSync(path, 'utf8')) as Summary;
    const w10 = summary.scale.W10 ?? {};
    for (const id of ['attention', 'fifo', 'per-store', 'grouped', 'scheduler', 'fair']) {
      expect(typeof w10[id]?.smallP99Ms, id).toBe('number');
      expect(w10[id]?.monthlyUsd, id).toBeCloseTo(byId(id).loadMonthDollars, 4);
    }
    expect(summary.pipeline).toEqual(pipeline);
    expect(summary.targets.map((t) => t.id)).toEqual(
      expect.arrayContaining([
        'smallP99VsFifo',
        'monthlyVsCheapestCapped',
        'attentionOverhead',
        'requestsPerTask',
      ]),
    );
  });

  it('renders the markdown tables and the SVG plot', () => {
    expect(part.markdown).toMatch(/\| design +\|/);
    expect(part.markdown).toContain('## Targets');
    expect(part.svg.startsWith('<svg')).toBe(true);
    expect(part.svg).toContain('polyline');
  });
});
