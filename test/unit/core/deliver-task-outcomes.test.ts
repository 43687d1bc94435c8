import { describe, expect, it, vi } from 'vitest';
import { RecordingTelemetry } from '../../../lambdas/adapters/recording-telemetry.js';
import type { RateAnswer } from '../../../lambdas/core/adaptive-rate.js';
import {
  DEFAULT_RETRY_AFTER_SECONDS,
  deliverTask,
  type DeliverDeps,
  type LaterSettles,
} from '../../../lambdas/core/deliver-task.js';
import { MetricNames } from '../../../lambdas/core/names.js';
import type {
  DeliveredSettle,
  DeliveryOutcome,
  Marketplace,
  ReceivedMessage,
  TaskQueues,
} from '../../../lambdas/core/ports.js';
import { MemoryDeadLetterLedger } from '../../support/memory-dead-letter-ledger.js';
import { MemoryDeliveryLog } from '../../support/memory-delivery-log.js';
import { claimElsewhere, receivedTask, taskWork } from '../support/deliver-fixtures.js';
import { storeRecord, T0 } from '../support/fixtures.js';

// deliverTask's outcomes mutation testing found unpinned: the dead-letter tally, the copy of a task this
// batch delivered, the expiry of a task throttled for too long, and what the marketplace call carries.

const work = taskWork();
const policy = { maxAttempts: 3 };
const message = (body: unknown = work, messageId = 'm1'): ReceivedMessage =>
  receivedTask(JSON.stringify(body), messageId);
const EXPIRY_MS = 60_000;

const setup = (...outcomes: DeliveryOutcome[]) => {
  let now = T0;
  let id = 0;
  const deliver = vi.fn<Marketplace['deliver']>(async () => outcomes.shift() ?? { kind: 'ok', status: 200 });
  const deadLetter = vi.fn<TaskQueues['deadLetter']>(async () => undefined);
  const deliveries = new MemoryDeliveryLog();
  const ledger = new MemoryDeadLetterLedger();
  const logs: { level: string; message: string; fields?: Record<string, unknown> }[] = [];
  const deps: DeliverDeps = {
    tasks: { deadLetter } as unknown as TaskQueues,
    marketplace: { deliver },
    deliveries,
    clock: { now: () => now, sleep: async (ms) => void (now += ms) },
    ids: { next: () => `attempt-${++id}` },
    telemetry: new RecordingTelemetry((record) => logs.push(record), 'info'),
    random: () => 0.5,
    settings: { marketplaceTimeoutMs: 5_000, expiryAgeMs: EXPIRY_MS },
    deadLetterLedger: ledger,
  };
  return { deps, deliver, deadLetter, deliveries, ledger, logs, at: (t: number) => void (now = t) };
};

/** A batch's delivered settles as the slice keeps them (slice.ts): added, then asked about by holder. */
const batchSettles = (): LaterSettles & { settles: DeliveredSettle[] } => {
  const settles: DeliveredSettle[] = [];
  return {
    settles,
    add: (settle) => void settles.push(settle),
    holds: (holder) => settles.some((settle) => settle.claimed.holder === holder),
  };
};

describe('deliverTask: dead letters are tallied for the reconciler', () => {
  it('counts each dead letter it writes for the store, at the time it writes it, before the send', async () => {
    const { deps, deadLetter, ledger, at } = setup({ kind: 'permanent', status: 422, error: 'bad sku' });
    deadLetter.mockImplementation(async () => void ledger.calls.push('deadLetter'));
    at(T0 + 3_000);
    await deliverTask(deps, storeRecord(), policy, message());
    expect({ calls: ledger.calls, tally: ledger.tallies.get('store-1') }).toEqual({
      calls: ['noteWritten store-1', 'deadLetter'],
      tally: { written: 1, writtenAt: T0 + 3_000 },
    });
  });

  it('still dead-letters and settles the task when the tally cannot be written, and warns', async () => {
    const { deps, deadLetter, deliveries, ledger, logs } = setup({
      kind: 'permanent',
      status: 422,
      error: 'bad sku',
    });
    vi.spyOn(ledger, 'noteWritten').mockRejectedValue(new Error('DynamoDB unavailable'));
    const result = await deliverTask(deps, storeRecord(), policy, message());
    expect({
      result,
      sent: deadLetter.mock.calls.length,
      status: (await deliveries.get('store-1', 'evt-1'))?.status,
      warned: logs
        .filter((l) => l.message === 'dead letter not counted')
        .map((l) => [l.fields?.['storeId'], l.fields?.['error']]),
    }).toEqual({
      result: { kind: 'done', as: 'dead_lettered' },
      sent: 1,
      status: 'dead_lettered',
      warned: [['store-1', 'Error: DynamoDB unavailable']],
    });
  });

  it('records the dead-lettered message on the task, so its own copy is never called again', async () => {
    const { deps, deliveries } = setup({ kind: 'permanent', status: 422, error: 'bad sku' });
    await deliverTask(deps, storeRecord(), policy, message(work, 'm-dead'));
    expect(await deliveries.get('store-1', 'evt-1')).toMatchObject({
      status: 'dead_lettered',
      deadMessageId: 'm-dead',
      lastError: 'marketplace_rejected: bad sku',
      lastStatus: 422,
      attempts: 1,
    });
  });
});

/** One task of a receive batch whose delivered settles are written later (`later`), with no pacing or deadline. */
const deliverInBatch = (
  deps: Parameters<typeof deliverTask>[0],
  received: Parameters<typeof deliverTask>[3],
  later: Parameters<typeof deliverTask>[7],
) => deliverTask(deps, storeRecord(), policy, received, undefined, undefined, undefined, later);

describe('deliverTask: a copy of a task this very batch delivered', () => {
  it('is a duplicate, not a retry, while the batch still holds its delivered settle', async () => {
    const { deps, deliver } = setup();
    const later = batchSettles();
    const first = await deliverInBatch(deps, message(), later);
    // A client's repeated POST: another message, the same task, in the same receive batch.
    const copy = await deliverInBatch(deps, message(work, 'm2'), later);
    expect({ first, copy, calls: deliver.mock.calls.length, settles: later.settles.length }).toEqual({
      first: { kind: 'done', as: 'delivered' },
      copy: { kind: 'done', as: 'duplicate' },
      calls: 1,
      settles: 1,
    });
  });

  it("backs off for another batch's claim, which this batch's settles do not hold", async () => {
    const { deps, deliveries } = setup();
    await claimElsewhere(deliveries, T0 + 4_000);
    const later = batchSettles();
    const result = await deliverInBatch(deps, message(), later);
    expect(result).toEqual({ kind: 'retry', afterSeconds: 4 });
  });

  it('leaves the delivered settle to the batch: the claim stays processing until the batch writes it', async () => {
    const { deps, deliveries } = setup();
    const later = batchSettles();
    await deliverTask(deps, storeRecord(), policy, message(), undefined, undefined, undefined, later);
    expect({
      status: (await deliveries.get('store-1', 'evt-1'))?.status,
      settle: later.settles[0],
    }).toEqual({
      status: 'processing',
      settle: {
        storeId: 'store-1',
        eventId: 'evt-1',
        claimed: expect.objectContaining({ holder: 'attempt-1', status: 'processing' }),
        now: T0,
      },
    });
  });
});

describe('deliverTask: a task throttled past its expiry age (no silent expiry)', () => {
  it.each([
    { case: 'at its expiry age', age: EXPIRY_MS, expired: true },
    { case: 'a millisecond short of it', age: EXPIRY_MS - 1, expired: false },
  ])('is dead-lettered only once throttled $case', async ({ age, expired }) => {
    const { deps, deadLetter, deliveries, at } = setup({
      kind: 'throttled',
      status: 429,
      retryAfterSeconds: 7,
    });
    at(T0 + age);
    const result = await deliverTask(deps, storeRecord(), policy, message());
    expect({
      result,
      letters: deadLetter.mock.calls.length,
      status: (await deliveries.get('store-1', 'evt-1'))?.status,
    }).toEqual({
      result: expired
        ? { kind: 'throttled', afterSeconds: 7, deadLettered: true }
        : { kind: 'throttled', afterSeconds: 7 },
      letters: expired ? 1 : 0,
      status: expired ? 'dead_lettered' : 'pending',
    });
  });

  it('says how long after its acceptance it expired, with the 429, counting no attempt', async () => {
    const { deps, deadLetter, deliveries, at } = setup(
      { kind: 'transient', status: 503, error: 'unavailable' },
      { kind: 'throttled', status: 429 },
    );
    await deliverTask(deps, storeRecord(), policy, message());
    at(T0 + 90_999);
    await deliverTask(deps, storeRecord(), policy, { ...message(), receiveCount: 2 });
    expect({
      reason: deadLetter.mock.calls[0]?.[2],
      record: await deliveries.get('store-1', 'evt-1'),
    }).toMatchObject({
      reason: {
        code: 'expiring',
        message: 'throttled (429) 90 s after it was accepted',
        lastStatus: 429,
        attempts: 1,
        firstAttemptAt: T0,
        lastAttemptAt: T0 + 90_999,
      },
      record: {
        status: 'dead_lettered',
        attempts: 1,
        lastStatus: 429,
        lastError: 'expiring: throttled (429) 90 s after it was accepted',
      },
    });
  });
});

describe('deliverTask: the marketplace call', () => {
  it('carries the trace id and, without entity and version, a body without them', async () => {
    const { deps, deliver } = setup();
    await deliverTask(deps, storeRecord(), policy, message({ ...work, traceId: 'trace-1' }));
    expect(deliver.mock.calls[0]?.[0]).toEqual({
      marketplace: storeRecord().marketplace,
      storeId: 'store-1',
      idempotencyKey: 'store-1:evt-1',
      body: { eventId: 'evt-1', type: 'inventory.update', payload: { sku: 'A', quantity: 1 } },
      traceId: 'trace-1',
    });
  });

  it('marks no version for a task without an entity, or with an entity but no version', async () => {
    const { deps, deliveries } = setup();
    const mark = vi.spyOn(deliveries, 'markVersion');
    await deliverTask(deps, storeRecord(), policy, message());
    await deliverTask(
      deps,
      storeRecord(),
      policy,
      message({ ...work, eventId: 'evt-2', entityId: 'A' }, 'm2'),
    );
    expect({
      marks: mark.mock.calls.length,
      version: await deliveries.deliveredVersion('store-1', 'A'),
    }).toEqual({
      marks: 0,
      version: undefined,
    });
  });

  it('marks the version at the time of the attempt', async () => {
    const { deps, deliveries, at } = setup();
    const mark = vi.spyOn(deliveries, 'markVersion');
    at(T0 + 1_234);
    await deliverTask(deps, storeRecord(), policy, message({ ...work, entityId: 'A', version: 2 }));
    expect(mark).toHaveBeenCalledWith('store-1', 'A', 2, T0 + 1_234);
  });

  it('backs a transient failure off by the attempt count it now has', async () => {
    const failure: DeliveryOutcome = { kind: 'transient', status: 500, error: 'x' };
    const { deps } = setup(failure, failure);
    deps.random = () => 0.99;
    const first = await deliverTask(deps, storeRecord(), { maxAttempts: 5 }, message());
    const second = await deliverTask(deps, storeRecord(), { maxAttempts: 5 }, message());
    // Full jitter under a ceiling of 2 s, then 4 s.
    expect([first, second]).toEqual([
      { kind: 'retry', afterSeconds: 2 },
      { kind: 'retry', afterSeconds: 4 },
    ]);
  });
});

describe("deliverTask: a 429 under throttleScope 'store' (the default) also keeps the task's other copies out", () => {
  // Simulation seed 3126243 (session 23): the store's hold does not stop a block another consumer reserved before it,
  // and that consumer held an SQS duplicate of the very task the 429 answered: it claimed the released record and
  // called it 6 s inside the Retry-After. The pending settle now carries the Retry-After's end under either scope.
  it('settles pending with the Retry-After end, counting no attempt, and throttles the store', async () => {
    const { deps, deliveries } = setup({ kind: 'throttled', status: 429, retryAfterSeconds: 7 });
    const result = await deliverTask(deps, storeRecord(), policy, message());
    expect(result).toEqual({ kind: 'throttled', afterSeconds: 7 });
    expect(await deliveries.get('store-1', 'evt-1')).toMatchObject({
      status: 'pending',
      lastStatus: 429,
      retryAt: T0 + 7_000,
    });
    expect((await deliveries.get('store-1', 'evt-1'))?.attempts ?? 0).toBe(0);
  });

  it('sends a duplicate copy claimed inside that Retry-After back as a fresh copy, without a call', async () => {
    const { deps, deliver, at } = setup({ kind: 'throttled', status: 429, retryAfterSeconds: 7 });
    await deliverTask(deps, storeRecord(), policy, message(work, 'm1'));
    at(T0 + 1_700);
    const duplicate = await deliverTask(deps, storeRecord(), policy, message(work, 'm1'));
    expect({ duplicate, calls: deliver.mock.calls.length }).toEqual({
      duplicate: { kind: 'retry', afterSeconds: 6, copy: true },
      calls: 1,
    });
  });
});

describe("deliverTask: a 429 under throttleScope 'task' throttles that task alone", () => {
  const taskScope = { maxAttempts: 3, throttleScope: 'task' as const };
  /** deliverTask with a rate observer: its result and the answers the rate was told. */
  const observed = async (deps: DeliverDeps, policy: Parameters<typeof deliverTask>[2] = taskScope) => {
    const seen: RateAnswer[] = [];
    const observe = async (answer: RateAnswer) => void seen.push(answer);
    const result = await deliverTask(deps, storeRecord(), policy, message(), undefined, undefined, observe);
    return { result, seen };
  };

  it('comes back as a fresh copy after its Retry-After, counting no attempt, and the rate hears no 429', async () => {
    const { deps, deliveries } = setup({ kind: 'throttled', status: 429, retryAfterSeconds: 7 });
    const { result, seen } = await observed(deps);
    expect({ result, record: await deliveries.get('store-1', 'evt-1'), seen }).toMatchObject({
      result: { kind: 'retry', afterSeconds: 7, copy: true },
      record: { status: 'pending', lastStatus: 429, lastError: 'throttled (429)', retryAt: T0 + 7_000 },
      seen: [{ throttled: false, startedAt: T0 }],
    });
    expect((await deliveries.get('store-1', 'evt-1'))?.attempts ?? 0).toBe(0);
    // Counted apart from the store-wide 429s, which the MarketplaceThrottling alarm watches.
    const telemetry = deps.telemetry as RecordingTelemetry;
    expect([
      telemetry.total(MetricNames.marketplaceTaskThrottled),
      telemetry.total(MetricNames.marketplaceThrottled),
    ]).toEqual([1, 0]);
    expect(seen[0]).not.toHaveProperty('retryAfterSeconds');
  });

  it('still passes on a rate header the 429 carries, and waits the default Retry-After without one', async () => {
    const limit = { perSecond: 4 };
    const { deps } = setup({ kind: 'throttled', status: 429, limit });
    const { result, seen } = await observed(deps);
    expect({ result, seen }).toEqual({
      result: { kind: 'retry', afterSeconds: DEFAULT_RETRY_AFTER_SECONDS, copy: true },
      seen: [{ throttled: false, startedAt: T0, limit }],
    });
  });

  it.each([
    { case: 'inside its Retry-After', left: 2_500, after: 3 },
    { case: 'whose end another clock puts past SQS’s longest delay', left: 901_500, after: 900 },
  ])('sends another copy claimed $case back as a fresh copy, without a call', async ({ left, after }) => {
    const { deps, deliver, deliveries } = setup();
    await deliveries.claim('store-1', 'evt-1', { holder: 'x', now: T0, until: T0 + 5_000, messageId: 'm0' });
    await deliveries.settle('store-1', 'evt-1', 'x', {
      status: 'pending',
      now: T0,
      countAttempt: false,
      retryAt: T0 + left,
    });
    const result = await deliverTask(deps, storeRecord(), taskScope, message());
    expect({ result, calls: deliver.mock.calls.length }).toEqual({
      result: { kind: 'retry', afterSeconds: after, copy: true },
      calls: 0,
    });
  });

  it('is claimed and called once its Retry-After has ended', async () => {
    const { deps, deliver, deliveries, at } = setup();
    await deliveries.claim('store-1', 'evt-1', { holder: 'x', now: T0, until: T0 + 5_000, messageId: 'm0' });
    await deliveries.settle('store-1', 'evt-1', 'x', {
      status: 'pending',
      now: T0,
      countAttempt: false,
      retryAt: T0 + 3_000,
    });
    at(T0 + 3_000);
    const result = await deliverTask(deps, storeRecord(), taskScope, message());
    expect({ result, calls: deliver.mock.calls.length }).toEqual({
      result: { kind: 'done', as: 'delivered' },
      calls: 1,
    });
  });

  it('is dead-lettered expiring past its expiry age, as a task done: the store is not throttled', async () => {
    const { deps, deadLetter, at } = setup({ kind: 'throttled', status: 429, retryAfterSeconds: 7 });
    at(T0 + EXPIRY_MS);
    const result = await deliverTask(deps, storeRecord(), taskScope, message());
    expect({ result, letters: deadLetter.mock.calls.length }).toEqual({
      result: { kind: 'done', as: 'dead_lettered' },
      letters: 1,
    });
  });

  it("under the default scope ('store') the rate hears the 429 with its Retry-After", async () => {
    const { deps } = setup({ kind: 'throttled', status: 429, retryAfterSeconds: 7 });
    const { result, seen } = await observed(deps, { maxAttempts: 3, throttleScope: 'store' });
    expect({ result, seen }).toEqual({
      result: { kind: 'throttled', afterSeconds: 7 },
      seen: [{ throttled: true, retryAfterSeconds: 7, startedAt: T0 }],
    });
  });
});
