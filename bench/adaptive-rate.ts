import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { startDynamoDbLocal, startFauxqs } from '../bin/local/emulators.js';
import { startLocalStack } from '../bin/local/local-stack.js';
import { LIMIT_HEADER_MODES, type LimitHeaderMode } from '../bin/local/marketplace-limit.js';
import type { MarketplaceCall } from '../bin/local/marketplace-sim.js';
import { machine } from './pipeline/report.js';
import { round } from './pipeline/stats.js';

/**
 * `npm run bench:adaptive [-- --quick]`: the adaptive rate (issue #13) measured on the real handlers and
 * emulators against the simulated marketplace's own per-store limit: 30 % of the plan's rate, lowered to 15 %
 * a third of the way in and raised back to 30 % at two thirds — once with bare 429s (AIMD), once with IETF
 * RateLimit-* headers, once with x-amzn-RateLimit-Limit. From 10 s on: the share of calls answered 429 and
 * the deliveries against what the real limit allowed (its integral over time). Writes
 * bench/results/adaptive-rate.md. Measures; asserts nothing.
 */
const quick = process.argv.includes('--quick');
const PHASE_MS = quick ? 20_000 : 40_000;
const WARMUP_MS = 10_000;
const POLICY_RATE = 20;
const CONSUMERS = 3;
const SHARES = [0.3, 0.15, 0.3];
const log = (message: string) =>
  process.stdout.write(`[bench:adaptive ${new Date().toISOString().slice(11, 19)}] ${message}\n`);

interface ModeResult {
  mode: LimitHeaderMode;
  calls: number;
  throttled: number;
  ok: number;
  allowed: number;
  /** 429s after the first answer that carried headers (header modes). */
  throttledAfterHeaders: number;
  phases: { share: number; ok: number; allowed: number; throttled: number; calls: number }[];
  view: unknown;
}

const runMode = async (
  endpoints: { dynamo: string; sqs: string },
  mode: LimitHeaderMode,
): Promise<ModeResult> => {
  const stack = await startLocalStack({
    prefix: `ad${mode}${Date.now() % 10_000}`,
    endpoints,
    workerPoolSize: 4,
    reconcileIntervalMs: 60_000,
    marketplaceSim: {
      latencyMs: 20,
      maxRecorded: 500_000,
      limit: { perSecond: POLICY_RATE * (SHARES[0] as number), headers: mode },
    },
    // ADAPTIVE_TRACE=calls also prints each change of the store's rate and each slice's end, as they happen.
    logLevel: process.env['ADAPTIVE_TRACE'] === 'calls' ? 'info' : 'warn',
    log: (record) => {
      if (process.env['ADAPTIVE_TRACE'] !== 'calls') return;
      if (record.message === 'marketplace rate adjusted' || record.message === 'slice ended')
        log(`    ${record.message} ${JSON.stringify(record.fields)}`);
    },
  });
  const request = async (method: string, path: string, body?: unknown, token = stack.adminToken) => {
    const res = await fetch(`${stack.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    return { status: res.status, body: text ? (JSON.parse(text) as unknown) : undefined };
  };
  try {
    const marketplace = stack.marketplace;
    const limit = marketplace?.limit;
    if (!marketplace || !limit) throw new Error('no limited marketplace simulator');
    const token = ((await request('POST', '/admin/tenants/bench/tokens')).body as { token: string }).token;
    const storeId = `adaptive-${mode}`;
    await request('PUT', `/admin/stores/${storeId}`, {
      tenantId: 'bench',
      marketplace: 'amazon',
      plan: 'pro',
      overrides: { ratePerSecond: POLICY_RATE, maxConcurrentConsumers: CONSUMERS },
    });
    // More tasks than the limit lets through in the run: the store never runs dry.
    const total = Math.ceil((POLICY_RATE * 0.35 * PHASE_MS * SHARES.length) / 1000) + 200;
    const started = Date.now();
    for (let i = 0; i < total; i += 100) {
      const tasks = Array.from({ length: Math.min(100, total - i) }, (_, k) => ({
        eventId: `t-${i + k}`,
        type: 'inventory.update',
        payload: { sku: 'SKU-1', quantity: i + k },
      }));
      const res = await request('POST', `/v1/stores/${storeId}/tasks/batch`, { tasks }, token);
      if (res.status !== 202) throw new Error(`batch: ${res.status}`);
    }
    const changes = SHARES.map((share, i) => ({
      at: started + i * PHASE_MS,
      perSecond: POLICY_RATE * share,
    }));
    for (const change of changes.slice(1)) {
      await sleep(Math.max(0, change.at - Date.now()));
      limit.setPerSecond(change.perSecond);
      log(`  ${mode}: marketplace limit now ${change.perSecond}/s`);
    }
    const end = started + PHASE_MS * SHARES.length;
    await sleep(Math.max(0, end - Date.now()));
    const view = (await request('GET', `/admin/stores/${storeId}`)).body as { rate?: unknown };
    const calls = marketplace.calls.filter((c) => c.storeId === storeId && c.startedAt < end);
    if (process.env['ADAPTIVE_TRACE'])
      for (let t = started; t < end; t += 1000)
        log(
          `  ${(t - started) / 1000}s: ${calls
            .filter((c) => c.startedAt >= t && c.startedAt < t + 1000)
            .map((c) => (c.status === 200 ? '.' : 'x'))
            .join('')}`,
        );
    // ADAPTIVE_TRACE=calls: every call within 2 s of a 429, to the millisecond (where pairs come from).
    if (process.env['ADAPTIVE_TRACE'] === 'calls')
      for (const c of calls)
        if (calls.some((t) => t.status === 429 && Math.abs(t.startedAt - c.startedAt) <= 2_000))
          log(
            `    ${((c.startedAt - started) / 1000).toFixed(3)}s ${c.status} ${c.endedAt - c.startedAt} ms`,
          );
    const counted = (from: number, to: number, pick: (c: MarketplaceCall) => boolean) =>
      calls.filter((c) => c.startedAt >= from && c.startedAt < to && pick(c)).length;
    const phases = changes.map((change, i) => {
      const from = Math.max(change.at, started + WARMUP_MS);
      const to = i + 1 < changes.length ? (changes[i + 1]?.at as number) : end;
      return {
        share: SHARES[i] as number,
        calls: counted(from, to, () => true),
        ok: counted(from, to, (c) => c.status === 200),
        throttled: counted(from, to, (c) => c.status === 429),
        allowed: (change.perSecond * Math.max(0, to - from)) / 1000,
      };
    });
    const firstAnswer = calls.reduce((min, c) => Math.min(min, c.endedAt), Number.POSITIVE_INFINITY);
    return {
      mode,
      calls: phases.reduce((s, p) => s + p.calls, 0),
      ok: phases.reduce((s, p) => s + p.ok, 0),
      throttled: phases.reduce((s, p) => s + p.throttled, 0),
      allowed: phases.reduce((s, p) => s + p.allowed, 0),
      throttledAfterHeaders:
        mode === 'none'
          ? Number.NaN
          : calls.filter((c) => c.status === 429 && c.startedAt > firstAnswer).length,
      phases,
      view: view.rate,
    };
  } finally {
    await stack.stop();
  }
};

const MODE_LABELS: Record<LimitHeaderMode, string> = {
  none: 'bare 429s (AIMD)',
  ietf: 'RateLimit-* headers',
  amzn: 'x-amzn-RateLimit-Limit',
  window: 'RateLimit-Remaining/-Reset, 5 s window',
};

const pct = (part: number, whole: number) => `${round((100 * part) / Math.max(1, whole), 1)} %`;

const report = (results: ModeResult[], seconds: number): string => {
  const lines = [
    '# Adaptive rate: the marketplace’s own limits (issue #13)',
    '',
    `Run ${new Date().toISOString()} on ${machine()}, ${round(seconds, 0)} s, \`npm run bench:adaptive${quick ? ' -- --quick' : ''}\`.`,
    '',
    `One pro store (policy ${POLICY_RATE}/s, ${CONSUMERS} consumers, 4 workers) with a deep backlog, real handlers on`,
    'DynamoDB Local and fauxqs, the simulated marketplace (20 ms latency) enforcing its own per-store limit: a',
    `token bucket of one second's burst at ${SHARES.map((s) => `${s * 100} %`).join(' → ')} of the policy rate, changed every`,
    `${PHASE_MS / 1000} s. Counted from ${WARMUP_MS / 1000} s on (the acceptance window): calls the store made, those answered 429,`,
    'and deliveries against what the real limit allowed over the same time. The `window` row: a fixed 5 s window of',
    "the same share's calls instead of the bucket, counted down in `RateLimit-Remaining` with `RateLimit-Reset`, its",
    '`RateLimit-Limit` naming no window (so read as per second: five times the real rate), 429s without Retry-After.',
    '',
    '| marketplace says | calls | 429s | 429 share | delivered | real limit allowed | throughput / real limit | 429s after the first header answer |',
    '|---|---|---|---|---|---|---|---|',
    ...results.map(
      (r) =>
        `| ${MODE_LABELS[r.mode]} | ${r.calls} | ${r.throttled} | ${pct(r.throttled, r.calls)} | ${r.ok} | ${round(r.allowed, 0)} | ${pct(r.ok, r.allowed)} | ${Number.isNaN(r.throttledAfterHeaders) ? '—' : r.throttledAfterHeaders} |`,
    ),
    '',
    'Per phase (share of the policy rate the marketplace allowed):',
    '',
    '| marketplace says | phase | calls | 429s | delivered / allowed |',
    '|---|---|---|---|---|',
    ...results.flatMap((r) =>
      r.phases.map(
        (p, i) =>
          `| ${r.mode} | ${i + 1}: ${p.share * 100} % | ${p.calls} | ${p.throttled} | ${p.ok} / ${round(p.allowed, 0)} (${pct(p.ok, p.allowed)}) |`,
      ),
    ),
    '',
    'The store view’s `rate` at the end of each run:',
    '',
    ...results.map((r) => `- ${r.mode}: \`${JSON.stringify(r.view)}\``),
    '',
  ];
  return lines.join('\n');
};

const RESULTS = 'bench/results/adaptive-rate.md';

/**
 * The readings kept below the run's own tables: the file's sections from its first `## ` heading on (each
 * session's runs and what they showed). A run rewrites only the head above them.
 */
const history = (): string => {
  if (!existsSync(RESULTS)) return '';
  const text = readFileSync(RESULTS, 'utf8');
  const start = text.search(/^## /m);
  return start < 0 ? '' : `\n${text.slice(start)}`;
};

const main = async (): Promise<void> => {
  const t0 = performance.now();
  mkdirSync('bench/results', { recursive: true });
  const [dynamo, sqs] = await Promise.all([startDynamoDbLocal(), startFauxqs()]);
  const endpoints = { dynamo: dynamo.endpoint, sqs: sqs.endpoint };
  const results: ModeResult[] = [];
  try {
    const only = process.argv.indexOf('--mode');
    const modes = only >= 0 ? [process.argv[only + 1] as LimitHeaderMode] : LIMIT_HEADER_MODES;
    for (const mode of modes) {
      log(`marketplace limit with ${mode === 'none' ? 'bare 429s' : `${mode} headers`}`);
      const result = await runMode(endpoints, mode);
      log(
        `  429 share ${pct(result.throttled, result.calls)}, throughput ${pct(result.ok, result.allowed)} of the real limit`,
      );
      results.push(result);
    }
  } finally {
    await Promise.all([dynamo.stop(), sqs.stop()]);
  }
  writeFileSync(RESULTS, report(results, (performance.now() - t0) / 1000) + history());
  log(`wrote ${RESULTS}`);
};

await main();
