import { mkdirSync, writeFileSync } from 'node:fs';
import { startDynamoDbLocal, startFauxqs } from '../bin/local/emulators.js';
import { startLocalStack } from '../bin/local/local-stack.js';
import { policyOf } from '../lambdas/core/store-model.js';

/**
 * `npm run bench:priority [-- --waiting 20000 --samples 5]`: task priority within a store, measured in
 * local mode (DynamoDB Local, fauxqs, the real handlers). A basic store (plan defaults: one consumer, 50
 * tasks and 20 s per slice) holds N waiting catalog updates; while it drains them, order syncs (high by
 * their type) are posted one at a time, and each is timed from its 202 to the start of its marketplace
 * call, with the catalog calls that started in between. Writes bench/results/task-priority.md. Measures,
 * does not assert.
 */
const arg = (name: string, fallback: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
};
const waiting = arg('waiting', 20_000);
const samples = arg('samples', 5);
const log = (message: string) => process.stdout.write(`[bench:priority] ${message}\n`);
const STORE = 'campaign';

const main = async (): Promise<void> => {
  const [dynamo, sqs] = await Promise.all([startDynamoDbLocal(), startFauxqs()]);
  const stack = await startLocalStack({
    port: 0,
    endpoints: { dynamo: dynamo.endpoint, sqs: sqs.endpoint },
    workerPoolSize: 2,
    marketplaceSim: { latencyMs: 20, maxRecorded: 100_000 },
    log: () => undefined,
  });
  const request = async (method: string, path: string, body: unknown, token = stack.adminToken) => {
    const res = await fetch(`${stack.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : undefined) as Record<string, unknown> };
  };
  const sim = stack.marketplace;
  if (!sim) throw new Error('the bench needs the simulated marketplace');
  const eventIdOf = (c: { body: unknown }) => (c.body as { eventId: string }).eventId;
  const callsOf = () => sim.calls.filter((c) => c.storeId === STORE);
  try {
    const store = { tenantId: 'bench', marketplace: 'mercadolivre', plan: 'basic' as const };
    await request('PUT', `/admin/stores/${STORE}`, { ...store, status: 'paused' });
    const policy = policyOf(store);
    const token = (await request('POST', '/admin/tenants/bench/tokens', {})).body['token'] as string;
    const fillStarted = Date.now();
    for (let i = 0; i < waiting; i += 100) {
      const tasks = Array.from({ length: Math.min(100, waiting - i) }, (_, k) => ({
        eventId: `cat-${i + k}`,
        type: 'catalog.update',
        payload: { sku: `SKU-${i + k}`, title: `Campaign item ${i + k}` },
      }));
      const res = await request('POST', `/v1/stores/${STORE}/tasks/batch`, { tasks }, token);
      if (res.status !== 202) throw new Error(`batch: ${res.status} ${JSON.stringify(res.body)}`);
      if ((i / 100) % 40 === 0) log(`filled ${i} of ${waiting}`);
    }
    const fillSeconds = (Date.now() - fillStarted) / 1000;
    log(`filled ${waiting} catalog updates in ${fillSeconds.toFixed(1)} s; resuming the store`);
    await request('PATCH', `/admin/stores/${STORE}`, { status: 'active' });
    const until = async (what: string, predicate: () => boolean, timeoutMs = 120_000) => {
      const deadline = Date.now() + timeoutMs;
      while (!predicate()) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    await until('the drain under way', () => callsOf().length >= 20);
    const rows: { latencyMs: number; overtaken: number; backlog: number }[] = [];
    for (let s = 0; s < samples; s++) {
      const eventId = `ord-${s}`;
      const view = await request('GET', `/admin/stores/${STORE}`, undefined);
      const backlog = (view.body['queue'] as { backlog: number }).backlog;
      const before = callsOf().length;
      const res = await request(
        'POST',
        `/v1/stores/${STORE}/tasks`,
        { eventId, type: 'orders.sync', payload: { orderId: eventId } },
        token,
      );
      const acceptedAt = Date.now();
      if (res.status !== 202) throw new Error(`order: ${res.status}`);
      await until(`${eventId} called`, () => callsOf().some((c) => eventIdOf(c) === eventId));
      const calls = callsOf();
      const call = calls.find((c) => eventIdOf(c) === eventId)!;
      const overtaken = calls.slice(before).filter((c) => c.startedAt < call.startedAt).length;
      rows.push({ latencyMs: call.startedAt - acceptedAt, overtaken, backlog });
      log(
        `${eventId}: called ${call.startedAt - acceptedAt} ms after its 202, ${overtaken} catalog calls between, ${backlog} waiting`,
      );
      await new Promise((r) => setTimeout(r, 1_000));
    }
    const worst = Math.max(...rows.map((r) => r.latencyMs));
    const sliceMs = policy.maxSliceSeconds * 1000;
    mkdirSync('bench/results', { recursive: true });
    writeFileSync(
      'bench/results/task-priority.md',
      [
        '# Task priority within a store: an order sync behind a catalog campaign',
        '',
        `Measured ${new Date().toISOString().slice(0, 10)} with \`npm run bench:priority\` on this machine (DynamoDB`,
        'Local, fauxqs, the real handlers, a simulated marketplace answering in 20 ms). One basic store (plan',
        `defaults: ${policy.maxConcurrentConsumers} consumer, ${policy.maxMessagesPerSlice} tasks and ${policy.maxSliceSeconds} s per slice, ${policy.ratePerSecond} calls/s) was filled with ${waiting}`,
        `catalog updates while paused (${fillSeconds.toFixed(0)} s on fauxqs), resumed, and while it drained them, ${samples} order`,
        'syncs (high by their type) were posted one at a time. Latency: from the order sync’s 202 to the',
        'start of its marketplace call; overtaken: catalog calls that started in between (the batch in hand).',
        '',
        '| order sync | catalog updates waiting | latency (ms) | catalog calls before it |',
        '|---|---|---|---|',
        ...rows.map((r, i) => `| ord-${i} | ${r.backlog} | ${r.latencyMs} | ${r.overtaken} |`),
        '',
        `Worst latency ${worst} ms against one slice's time of ${sliceMs} ms (${((100 * worst) / sliceMs).toFixed(0)} %). Without the`,
        `high queue the order sync would wait behind every catalog update: ${waiting} tasks at ${policy.ratePerSecond}/s ≈ ${Math.round(waiting / policy.ratePerSecond / 60)} min.`,
        '',
      ].join('\n'),
    );
    log('wrote bench/results/task-priority.md');
  } finally {
    await stack.stop();
    await Promise.all([dynamo.stop(), sqs.stop()]);
  }
};

await main();
