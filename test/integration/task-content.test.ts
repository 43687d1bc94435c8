import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unpairedSurrogatePath } from '../../lambdas/core/sqs-text.js';
import { startTestStack, waitFor, type TestStack } from '../support/harness.js';

/**
 * Issue #15 on the real emulator (fauxqs refuses every character outside the BMP, SQS refuses U+FFFE and
 * U+FFFF): whatever Unicode an integrator puts in a task's free text, the answer is 202 and the marketplace
 * receives the same strings, or 400 naming the field — never a 5xx. Throttle re-sends and redrives carry
 * the escaped body on, so they keep it identical too.
 */
type Task = { eventId: string; type: string; payload: Record<string, unknown>; entityId?: string };

/** One character of Unicode text: anything but a lone surrogate, with the hard cases weighted up. */
const char = fc.oneof(
  {
    weight: 4,
    arbitrary: fc
      .integer({ min: 0, max: 0x10ffff - 0x800 })
      .map((cp) => String.fromCodePoint(cp < 0xd800 ? cp : cp + 0x800)),
  },
  {
    weight: 2,
    arbitrary: fc.constantFrom('😀', '𝕿', '𠀀', '\uFFFE', '\uFFFF', '\uFDD0', '\u0000', '\u007F', 'ã'),
  },
  { weight: 3, arbitrary: fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 1 }) },
);
const loneSurrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((u) => String.fromCharCode(u));

/** Up to `max` code units (zod's limits count code units; an astral character is two). */
const text = (min: number, max: number) =>
  fc.string({ unit: char, minLength: min, maxLength: Math.floor(max / 2) });

const payloadOf = fc.oneof(
  fc
    .record(
      {
        sku: text(1, 128),
        title: text(1, 500),
        description: text(0, 2000),
        attributes: fc.dictionary(text(0, 128), fc.oneof(text(0, 1000), fc.integer(), fc.boolean()), {
          maxKeys: 4,
        }),
      },
      { requiredKeys: ['sku'] },
    )
    .map((payload) => ({ type: 'catalog.update', payload })),
  fc
    .record({
      orderId: text(1, 128),
      kind: fc.constant('message'),
      details: fc.dictionary(
        text(0, 128),
        fc.jsonValue({ maxDepth: 2 }).chain(() => text(0, 200)),
        { maxKeys: 3 },
      ),
    })
    .map((payload) => ({ type: 'postsale.event', payload })),
  fc.record({ orderId: text(1, 128), carrier: text(1, 64), trackingCode: text(1, 128) }).map((payload) => ({
    type: 'shipping.notify',
    payload,
  })),
);

/** Rewrites one string of a JSON value in place. */
type Site = (edit: (s: string) => string) => void;

/** Every place a string stands in a JSON value: string values, and object keys. */
const stringSites = (value: unknown, sites: Site[] = []): Site[] => {
  if (Array.isArray(value)) {
    value.forEach((item: unknown, i) => {
      if (typeof item === 'string') sites.push((edit) => void (value[i] = edit(item)));
      else stringSites(item, sites);
    });
  } else if (value !== null && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    for (const [key, item] of Object.entries(record)) {
      sites.push((edit) => {
        delete record[key];
        record[edit(key)] = item;
      });
      if (typeof item === 'string') sites.push((edit) => void (record[key] = edit(item)));
      else stringSites(item, sites);
    }
  }
  return sites;
};

/** A copy of `payload` with `surrogate` put at the start of one of its strings, chosen by `pick`. */
const withSurrogate = (payload: Record<string, unknown>, pick: number, surrogate: string) => {
  const copy = structuredClone(payload);
  const sites = stringSites(copy);
  sites[pick % sites.length]?.((s) => surrogate + s);
  return copy;
};

/** A task; one in five has a lone surrogate put into one of its payload's strings (a key or a value). */
const taskArb = (prefix: string) =>
  fc
    .tuple(
      fc.nat(),
      payloadOf,
      fc.option(text(1, 256), { nil: undefined }),
      fc.oneof(
        { weight: 4, arbitrary: fc.constant(undefined) },
        { weight: 1, arbitrary: fc.tuple(fc.nat(), loneSurrogate) },
      ),
    )
    .map(([n, body, entityId, poison]): Task => {
      const task: Task = {
        eventId: `${prefix}-${n}`,
        ...body,
        ...(entityId === undefined ? {} : { entityId }),
      };
      if (!poison) return task;
      const [pick, surrogate] = poison;
      return { ...task, payload: withSurrogate(task.payload, pick, surrogate) };
    });

/** The generated tasks fit their schemas, so a task is refused exactly when a string of it is not Unicode text. */
const isText = (task: Task) => unpairedSurrogatePath(task) === undefined;

describe('task content (issue #15)', () => {
  let t: TestStack;
  let token: string;
  const accepted = new Map<string, Task>();
  let seq = 0;

  const deliveredBody = (storeId: string, eventId: string) =>
    t.marketplace.calls.find(
      (c) => c.storeId === storeId && c.idempotencyKey === `${storeId}:${eventId}` && c.status < 300,
    )?.body;
  const expectedBody = (task: Task) => ({
    eventId: task.eventId,
    type: task.type,
    payload: task.payload,
    ...(task.entityId === undefined ? {} : { entityId: task.entityId }),
  });

  beforeAll(async () => {
    t = await startTestStack({ workerPoolSize: 4 });
    token = await t.tokenFor('acme');
    await t.createStore('uni', {
      tenantId: 'acme',
      marketplace: 'amazon',
      plan: 'pro',
      overrides: { ratePerSecond: 500 },
    });
  });
  afterAll(async () => {
    await t?.stop();
  });

  it('answers 202 or 400 to one task of any Unicode, 400 exactly when a string is not Unicode text', async () => {
    await fc.assert(
      fc.asyncProperty(taskArb('one'), async (generated) => {
        const task = { ...generated, eventId: `one-${seq++}` };
        const res = await t.request<{ error?: { code: string; message: string } }>(
          'POST',
          '/v1/stores/uni/tasks',
          {
            token,
            body: task,
          },
        );
        if (isText(task)) {
          expect(res.status).toBe(202);
          accepted.set(task.eventId, task);
        } else {
          expect(res).toMatchObject({ status: 400, body: { error: { code: 'invalid_request' } } });
          // A poisoned key of a strict payload is first an unknown field; either way the field is named.
          expect(res.body.error?.message).toMatch(/^(payload|entityId)\b.*: /);
        }
      }),
      { numRuns: 150, seed: Number(process.env['FUZZ_SEED'] ?? 15) },
    );
  });

  it('answers a batch of any Unicode with 202, rejecting exactly the tasks that are not Unicode text', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(taskArb('b'), { minLength: 1, maxLength: 8 }), async (generated) => {
        const tasks = generated.map((task) => ({ ...task, eventId: `b-${seq++}` }));
        const res = await t.request<{
          accepted: string[];
          rejected: { eventId: string; error: { code: string } }[];
        }>('POST', '/v1/stores/uni/tasks/batch', { token, body: { tasks } });
        expect(res.status).toBe(202);
        expect(res.body.accepted).toEqual(tasks.filter(isText).map((task) => task.eventId));
        expect(res.body.rejected.map((r) => [r.eventId, r.error.code])).toEqual(
          tasks.filter((task) => !isText(task)).map((task) => [task.eventId, 'invalid_request']),
        );
        for (const task of tasks.filter(isText)) accepted.set(task.eventId, task);
      }),
      { numRuns: 40, seed: Number(process.env['FUZZ_SEED'] ?? 15) },
    );
  });

  it('delivers every accepted task with the same strings, code point for code point', async () => {
    expect(accepted.size).toBeGreaterThan(100);
    await waitFor('every accepted task is delivered', () =>
      [...accepted.keys()].every((eventId) => deliveredBody('uni', eventId) !== undefined),
    );
    const mismatches = [...accepted.values()].filter(
      (task) => JSON.stringify(deliveredBody('uni', task.eventId)) !== JSON.stringify(expectedBody(task)),
    );
    expect(mismatches).toEqual([]);
  });

  const emojiTask = (eventId: string): Task => ({
    eventId,
    type: 'catalog.update',
    payload: {
      sku: 'sku-😀',
      title: 'Camiseta 😀 promo 𝕿 \uFFFE\uFFFF',
      attributes: { 'cor 🎨': 'azul 💙' },
    },
  });

  it('keeps a throttled task identical through its delayed re-send', async () => {
    await t.createStore('uni-429', {
      tenantId: 'acme',
      marketplace: 'amazon',
      plan: 'basic',
      overrides: { ratePerSecond: 100 },
    });
    let throttled = 0;
    t.marketplace.setResponder((call) =>
      // Retry-After 3 s: longer than a slice sleeps through, so the task comes back as a re-sent copy.
      call.storeId === 'uni-429' && throttled++ === 0
        ? { status: 429, headers: { 'retry-after': '3' } }
        : undefined,
    );
    const task = emojiTask('thr');
    expect((await t.request('POST', '/v1/stores/uni-429/tasks', { token, body: task })).status).toBe(202);
    await waitFor(
      'the re-sent task is delivered',
      () => deliveredBody('uni-429', 'thr') !== undefined,
      30_000,
    );
    t.marketplace.setResponder(undefined);
    const calls = t.marketplace.calls.filter((c) => c.storeId === 'uni-429');
    expect(calls.map((c) => [c.status, JSON.stringify(c.body)])).toEqual([
      [429, JSON.stringify(expectedBody(task))],
      [200, JSON.stringify(expectedBody(task))],
    ]);
  });

  it('keeps a dead-lettered task identical through a redrive', async () => {
    await t.createStore('uni-dlq', {
      tenantId: 'acme',
      marketplace: 'amazon',
      plan: 'basic',
      overrides: { ratePerSecond: 100 },
    });
    t.marketplace.setResponder((call) => (call.storeId === 'uni-dlq' ? { status: 422 } : undefined));
    const task = emojiTask('dl');
    expect((await t.request('POST', '/v1/stores/uni-dlq/tasks', { token, body: task })).status).toBe(202);
    await waitFor(
      'the task is dead-lettered',
      async () => {
        const view = await t.admin<{ queue: { deadLetters: number } }>('GET', '/admin/stores/uni-dlq');
        return view.body.queue.deadLetters === 1;
      },
      20_000,
    );
    t.marketplace.setResponder(undefined);
    expect((await t.admin('POST', '/admin/stores/uni-dlq/dead-letters/redrive')).status).toBe(202);
    await waitFor(
      'the redriven task is delivered',
      () => deliveredBody('uni-dlq', 'dl') !== undefined,
      30_000,
    );
    expect(JSON.stringify(deliveredBody('uni-dlq', 'dl'))).toBe(JSON.stringify(expectedBody(task)));
  });
});
