import { randomBytes } from 'node:crypto';
import {
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import {
  CreateTableCommand,
  DeleteTableCommand,
  PutItemCommand,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import { startLocalStack, type LocalStack } from '../../bin/local/local-stack.js';
import { EnvNames } from '../../lambdas/config/env-names.js';
import { instrument, type RequestCounts } from './request-counter.js';
import { percentile } from './stats.js';

/**
 * Part 1 of the benchmark: the real handlers on the real emulators, on this machine, in one run.
 * Every figure comes from a measurement in the same process run; ratios are what to compare.
 */
export interface Endpoints {
  dynamo: string;
  sqs: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Invocations and worker-busy time (Lambda's billed duration) of both event sources: the levels' and the confirm queue's. */
const workerStats = (stack: LocalStack): { invocations: number; busyMs: number } => ({
  invocations: stack.eventSource.stats.invocations + stack.confirmSource.stats.invocations,
  busyMs: stack.eventSource.stats.busyMs + stack.confirmSource.stats.busyMs,
});

/** The emulator's own ceiling: send + receive + delete of `messages` messages, batches of 10, `lanes` in parallel. */
export const measureCeiling = async (
  sqs: SQSClient,
  messages: number,
  lanes = 8,
  maxSendMs = 10_000,
): Promise<number> => {
  const { QueueUrl } = await sqs.send(
    new CreateQueueCommand({ QueueName: `bench-ceiling-${randomBytes(3).toString('hex')}` }),
  );
  const perLane = Math.ceil(messages / lanes / 10);
  const started = performance.now();
  let sent = 0;
  await Promise.all(
    Array.from({ length: lanes }, async () => {
      // Time-boxed as well as counted: on a loaded machine the ceiling is measured, not waited for.
      for (let b = 0; b < perLane && performance.now() - started < maxSendMs; b++, sent += 10) {
        await sqs.send(
          new SendMessageBatchCommand({
            QueueUrl,
            Entries: Array.from({ length: 10 }, (_, i) => ({
              Id: String(i),
              MessageBody: `{"n":${b * 10 + i}}`,
            })),
          }),
        );
      }
    }),
  );
  let received = 0;
  const total = sent;
  await Promise.all(
    Array.from({ length: lanes }, async () => {
      while (received < total) {
        const out = await sqs.send(
          new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }),
        );
        const batch = out.Messages ?? [];
        if (batch.length === 0) {
          if (received >= total) return;
          continue;
        }
        received += batch.length;
        await sqs.send(
          new DeleteMessageBatchCommand({
            QueueUrl,
            Entries: batch.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle ?? '' })),
          }),
        );
      }
    }),
  );
  return total / ((performance.now() - started) / 1000);
};

/**
 * DynamoDB Local's ceiling for the writes the pipeline makes most: conditional PutItems
 * (attribute_not_exists, as the effect-once claim), `writes` of them on distinct keys, `lanes` in parallel,
 * on a table of their own. Conditional writes per second.
 */
export const measureDynamoCeiling = async (
  dynamo: DynamoDBClient,
  writes: number,
  lanes = 8,
  maxMs = 20_000,
): Promise<number> => {
  const TableName = `bench-ceiling-${randomBytes(3).toString('hex')}`;
  await dynamo.send(
    new CreateTableCommand({
      TableName,
      AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
      KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
      BillingMode: 'PAY_PER_REQUEST',
    }),
  );
  try {
    const perLane = Math.ceil(writes / lanes);
    const started = performance.now();
    let done = 0;
    await Promise.all(
      Array.from({ length: lanes }, async (_, lane) => {
        // Time-boxed as well as counted: on a loaded machine the ceiling is measured, not waited for.
        for (let i = 0; i < perLane && performance.now() - started < maxMs; i++, done++) {
          await dynamo.send(
            new PutItemCommand({
              TableName,
              Item: { pk: { S: `${lane}#${i}` }, status: { S: 'processing' }, at: { N: String(Date.now()) } },
              ConditionExpression: 'attribute_not_exists(pk)',
            }),
          );
        }
      }),
    );
    return done / ((performance.now() - started) / 1000);
  } finally {
    await dynamo.send(new DeleteTableCommand({ TableName })).catch(() => undefined);
  }
};

/** The emulators' first passes, before they are warm: what a cold measurement would have read. */
export interface ColdPasses {
  sqs: number;
  dynamo: number;
}

/** `passes` runs of `measure` one after another (at least one), answering the first: the cold one. */
export const firstOfPasses = async (passes: number, measure: () => Promise<number>): Promise<number> => {
  const cold = await measure();
  for (let i = 1; i < passes; i++) await measure();
  return cold;
};

/**
 * Brings both emulators to their steady state before anything is measured. DynamoDB Local runs on the JVM
 * and fauxqs on Node; both compile their hot paths as they run, and their first passes measure that, not the
 * emulator (on this machine DynamoDB Local's conditional writes/s about doubled over its first passes and then
 * held). A ceiling measured cold understates what the pipeline is compared with, so every figure is taken
 * warm: `sqsPasses` and `dynamoPasses` ceiling passes and one pipeline run, all discarded but the first
 * passes' figures, which the report shows beside the warm ones.
 */
export const warmUp = async (
  clients: { sqs: SQSClient; dynamo: DynamoDBClient },
  endpoints: Endpoints,
  opts: { sqsMessages: number; dynamoWrites: number; sqsPasses: number; dynamoPasses: number; tasks: number },
): Promise<ColdPasses> => {
  const sqs = await firstOfPasses(opts.sqsPasses, () => measureCeiling(clients.sqs, opts.sqsMessages));
  const dynamo = await firstOfPasses(opts.dynamoPasses, () =>
    measureDynamoCeiling(clients.dynamo, opts.dynamoWrites),
  );
  await measureThroughput(endpoints, { poolSize: 4, latencyMs: 0, stores: 10, tasks: opts.tasks });
  return { sqs, dynamo };
};

interface Harness {
  stack: LocalStack;
  token: string;
  counter: ReturnType<typeof instrument>;
  request: (
    method: string,
    path: string,
    body?: unknown,
    token?: string,
  ) => Promise<{ status: number; body: unknown }>;
}

const startHarness = async (endpoints: Endpoints, poolSize: number, latencyMs: number): Promise<Harness> => {
  const stack = await startLocalStack({
    prefix: `b${randomBytes(3).toString('hex')}`,
    endpoints,
    workerPoolSize: poolSize,
    reconcileIntervalMs: 60_000,
    marketplaceSim: { latencyMs, maxRecorded: 500_000 },
    log: () => undefined,
    settings: { [EnvNames.sweepStoresPerRun]: '35' },
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
  const tokenRes = await request('POST', '/admin/tenants/bench/tokens');
  const token = (tokenRes.body as { token: string }).token;
  const counter = instrument(stack.clients, stack.resources.attentionQueueUrl, stack.resources.tables);
  return { stack, token, counter, request };
};

const createStore = async (h: Harness, storeId: string, plan: string, overrides: Record<string, number>) => {
  const res = await h.request('PUT', `/admin/stores/${storeId}`, {
    tenantId: 'bench',
    marketplace: 'amazon',
    plan,
    overrides,
  });
  if (res.status !== 201 && res.status !== 200)
    throw new Error(`PUT ${storeId}: ${res.status} ${JSON.stringify(res.body)}`);
};

const task = (eventId: string) => ({
  eventId,
  type: 'inventory.update',
  payload: { sku: 'SKU-1', quantity: 1 },
});

const submit = async (h: Harness, storeId: string, eventIds: string[]): Promise<void> => {
  for (let i = 0; i < eventIds.length; i += 100) {
    const res = await h.request(
      'POST',
      `/v1/stores/${storeId}/tasks/batch`,
      { tasks: eventIds.slice(i, i + 100).map(task) },
      h.token,
    );
    if (res.status !== 202) throw new Error(`batch: ${res.status} ${JSON.stringify(res.body)}`);
  }
};

const waitUntil = async (what: string, predicate: () => boolean, timeoutMs: number): Promise<void> => {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`benchmark timed out waiting for ${what}`);
    await sleep(20);
  }
};

export interface ThroughputResult {
  poolSize: number;
  latencyMs: number;
  tasks: number;
  tasksPerSecond: number;
  counts: RequestCounts;
  invocations: number;
  /** Time the worker handler ran (Lambda's billed duration), summed over invocations. */
  workerBusyMs: number;
}

/** Tasks/s from the first HTTP request to the last marketplace delivery, over `stores` stores. */
export const measureThroughput = async (
  endpoints: Endpoints,
  opts: { poolSize: number; latencyMs: number; stores: number; tasks: number },
): Promise<ThroughputResult> => {
  const h = await startHarness(endpoints, opts.poolSize, opts.latencyMs);
  try {
    const ids = Array.from({ length: opts.stores }, (_, i) => `tp-${i}`);
    // Enterprise stores with a high rate: the pipeline, not a plan, is what is measured.
    for (const id of ids) await createStore(h, id, 'enterprise', { ratePerSecond: 1000 });
    h.counter.reset();
    const before = workerStats(h.stack);
    const perStore = Math.ceil(opts.tasks / opts.stores);
    const started = performance.now();
    await Promise.all(
      ids.map((id) =>
        submit(
          h,
          id,
          Array.from({ length: perStore }, (_, i) => `t-${i}`),
        ),
      ),
    );
    const total = perStore * opts.stores;
    const marketplace = h.stack.marketplace;
    if (!marketplace) throw new Error('no marketplace simulator');
    await waitUntil('the throughput run to drain', () => marketplace.totals.ok >= total, 600_000);
    const seconds = (performance.now() - started) / 1000;
    // Let the last slices end (idle marks, requeues) so their requests are counted too.
    await sleep(2_500);
    return {
      poolSize: opts.poolSize,
      latencyMs: opts.latencyMs,
      tasks: total,
      tasksPerSecond: total / seconds,
      counts: h.counter.counts(),
      invocations: workerStats(h.stack).invocations - before.invocations,
      workerBusyMs: workerStats(h.stack).busyMs - before.busyMs,
    };
  } finally {
    await h.stack.stop();
  }
};

export interface FairnessResult {
  backlog: number;
  smallTasks: number;
  p50Ms: number;
  p99Ms: number;
  bigDrainSeconds: number | undefined;
  latencies: number[];
  poolSize: number;
  /** Worker invocations, their time inside the handler, and the run's length: where the workers' time went. */
  invocations: number;
  workerBusyMs: number;
  runMs: number;
}

/**
 * Small stores' time from 202 to delivery while one pro store drains `backlog` tasks (0 = an idle system):
 * `smallStores` basic stores each post one task every `periodMs` for as long as the big store drains.
 */
export const measureFairness = async (
  endpoints: Endpoints,
  opts: {
    backlog: number;
    smallStores: number;
    periodMs: number;
    minDurationMs: number;
    poolSize: number;
    latencyMs: number;
  },
): Promise<FairnessResult> => {
  const h = await startHarness(endpoints, opts.poolSize, opts.latencyMs);
  try {
    const marketplace = h.stack.marketplace;
    if (!marketplace) throw new Error('no marketplace simulator');
    const small = Array.from({ length: opts.smallStores }, (_, i) => `small-${i}`);
    for (const id of small) await createStore(h, id, 'basic', { ratePerSecond: 100 });
    await createStore(h, 'big', 'pro', { ratePerSecond: 1000 });
    const acceptedAt = new Map<string, number>();
    const before = workerStats(h.stack);
    const started = Date.now();
    if (opts.backlog > 0)
      await submit(
        h,
        'big',
        Array.from({ length: opts.backlog }, (_, i) => `b-${i}`),
      );
    const bigDone = () =>
      marketplace.calls.filter((c) => c.storeId === 'big' && c.status < 300).length >= opts.backlog;
    let seq = 0;
    while (Date.now() - started < opts.minDurationMs || (opts.backlog > 0 && !bigDone())) {
      const round = seq++;
      await Promise.all(
        small.map(async (id) => {
          // Measured from the moment the request is sent: an upper bound on "from 202 to delivery".
          const sentAt = Date.now();
          const res = await h.request('POST', `/v1/stores/${id}/tasks`, task(`s-${round}`), h.token);
          if (res.status === 202) acceptedAt.set(`${id}:s-${round}`, sentAt);
        }),
      );
      await sleep(opts.periodMs);
      if (Date.now() - started > 600_000) throw new Error('the fairness run did not finish in 10 minutes');
    }
    const bigDrainSeconds = opts.backlog > 0 ? (Date.now() - started) / 1000 : undefined;
    await waitUntil(
      'the small stores to drain',
      () => [...acceptedAt.keys()].every((k) => marketplace.effects.has(k)),
      120_000,
    );
    const runMs = Date.now() - started;
    const deliveredAt = new Map<string, number>();
    for (const call of marketplace.calls) {
      if (call.idempotencyKey && call.status < 300 && !deliveredAt.has(call.idempotencyKey))
        deliveredAt.set(call.idempotencyKey, call.endedAt);
    }
    const latencies = [...acceptedAt]
      .map(([key, at]) => (deliveredAt.get(key) ?? NaN) - at)
      .filter((v) => Number.isFinite(v));
    return {
      backlog: opts.backlog,
      smallTasks: latencies.length,
      p50Ms: percentile(latencies, 50),
      p99Ms: percentile(latencies, 99),
      bigDrainSeconds,
      latencies,
      poolSize: opts.poolSize,
      invocations: workerStats(h.stack).invocations - before.invocations,
      workerBusyMs: workerStats(h.stack).busyMs - before.busyMs,
      runMs,
    };
  } finally {
    await h.stack.stop();
  }
};
