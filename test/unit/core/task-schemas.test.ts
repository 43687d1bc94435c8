import { describe, expect, it } from 'vitest';
import {
  BatchBodySchema,
  MAX_BATCH_TASKS,
  TASK_TYPES,
  TaskSchema,
  taskPriorityOf,
  type TaskType,
} from '../../../lambdas/core/task-schemas.js';
import { ISO_4217_CODES } from '../../../lambdas/core/currencies.js';

/** The path of the first problem, as the 400 message names it; undefined when the task is valid. */
const problemAt = (task: unknown): string | undefined => {
  const result = TaskSchema.safeParse(task);
  return result.success ? undefined : (result.error.issues[0]?.path ?? []).join('.');
};

const VALID_PAYLOADS: Record<TaskType, Record<string, unknown>> = {
  'orders.sync': { orderId: 'o-1', status: 'paid', updatedAt: '2025-01-15T12:00:00Z' },
  'inventory.update': { sku: 'SKU-1', quantity: 0 },
  'price.update': { sku: 'SKU-1', amount: 19.9, currency: 'BRL' },
  'catalog.update': {
    sku: 'SKU-1',
    title: 'Mug',
    attributes: { colour: 'red', litres: 0.3, dishwasher: true },
  },
  'shipping.notify': {
    orderId: 'o-1',
    carrier: 'correios',
    trackingCode: 'BR123',
    shippedAt: '2025-01-15T12:00:00-03:00',
  },
  'postsale.event': { orderId: 'o-1', kind: 'refund', details: { amount: 10 } },
};

const task = (
  type: TaskType,
  payload: unknown = VALID_PAYLOADS[type],
  extra: Record<string, unknown> = {},
) => ({
  eventId: 'evt-1',
  type,
  payload,
  ...extra,
});

describe('TaskSchema: the envelope', () => {
  it('knows exactly the contract’s task types', () => {
    expect([...TASK_TYPES].sort()).toEqual(
      [
        'catalog.update',
        'inventory.update',
        'orders.sync',
        'postsale.event',
        'price.update',
        'shipping.notify',
      ].sort(),
    );
  });

  it.each([
    ['a', 'one character'],
    ['A-Za-z0-9._:-', 'every allowed punctuation'],
    ['x'.repeat(128), '128 characters'],
  ])('accepts eventId %j (%s)', (eventId, _why) => {
    expect(problemAt({ ...task('inventory.update'), eventId })).toBeUndefined();
  });

  it.each([
    ['', 'empty'],
    ['x'.repeat(129), '129 characters'],
    ['a b', 'a space'],
    ['a/b', 'a slash'],
    ['ação', 'non-ASCII letters'],
    [42, 'a number'],
  ])('rejects eventId %j (%s)', (eventId, _why) => {
    expect(problemAt({ ...task('inventory.update'), eventId })).toBe('eventId');
  });

  it('rejects an unknown type', () => {
    expect(problemAt({ ...task('inventory.update'), type: 'stock.update' })).toBe('type');
  });

  it('rejects an unknown envelope field', () => {
    expect(problemAt(task('inventory.update', undefined, { urgency: 'high' }))).toBe('');
  });

  it('accepts a task priority and refuses an unknown one', () => {
    expect(problemAt(task('inventory.update', undefined, { priority: 'high' }))).toBeUndefined();
    expect(problemAt(task('inventory.update', undefined, { priority: 'urgent' }))).toBe('priority');
  });

  it.each([
    ['orders.sync', 'high'],
    ['shipping.notify', 'high'],
    ['postsale.event', 'high'],
    ['inventory.update', 'normal'],
    ['price.update', 'normal'],
    ['catalog.update', 'normal'],
  ] as const)('gives %s the default priority %s, which the task may override', (type, expected) => {
    expect(taskPriorityOf({ type })).toBe(expected);
    const other = expected === 'high' ? 'normal' : 'high';
    expect(taskPriorityOf({ type, priority: other })).toBe(other);
  });

  it('rejects a payload that is not an object', () => {
    expect(problemAt(task('inventory.update', [1, 2]))).toBe('payload');
  });

  it.each([0, 7])('accepts version %d', (version) => {
    expect(problemAt(task('inventory.update', undefined, { version }))).toBeUndefined();
  });

  it.each([-1, 1.5, '2'])('rejects version %j', (version) => {
    expect(problemAt(task('inventory.update', undefined, { version }))).toBe('version');
  });

  it('accepts an entityId', () => {
    expect(problemAt(task('inventory.update', undefined, { entityId: 'SKU-1' }))).toBeUndefined();
  });

  it('rejects an empty entityId', () => {
    expect(problemAt(task('inventory.update', undefined, { entityId: '' }))).toBe('entityId');
  });
});

describe('TaskSchema: payloads', () => {
  it.each(TASK_TYPES)('accepts a valid %s', (type) => {
    expect(problemAt(task(type))).toBeUndefined();
  });

  it.each<[TaskType, Record<string, unknown>, string]>([
    ['inventory.update', { sku: 'A', quantity: -1 }, 'payload.quantity'],
    ['inventory.update', { sku: 'A', quantity: 1.5 }, 'payload.quantity'],
    ['inventory.update', { sku: 'A', quantity: '3' }, 'payload.quantity'],
    ['inventory.update', { sku: 'A' }, 'payload.quantity'],
    ['inventory.update', { quantity: 1 }, 'payload.sku'],
    ['inventory.update', { sku: '', quantity: 1 }, 'payload.sku'],
    ['inventory.update', { sku: 'A', quantity: 1, warehouse: 'x' }, 'payload'],
    ['price.update', { sku: 'A', amount: 0, currency: 'BRL' }, 'payload.amount'],
    ['price.update', { sku: 'A', amount: -5, currency: 'BRL' }, 'payload.amount'],
    ['price.update', { sku: 'A', amount: '10', currency: 'BRL' }, 'payload.amount'],
    ['price.update', { sku: 'A', amount: 10, currency: 'brl' }, 'payload.currency'],
    ['price.update', { sku: 'A', amount: 10, currency: 'BR' }, 'payload.currency'],
    ['price.update', { sku: 'A', amount: 10, currency: 'BRLX' }, 'payload.currency'],
    ['price.update', { sku: 'A', amount: 10 }, 'payload.currency'],
    ['orders.sync', { status: 'paid' }, 'payload.orderId'],
    ['orders.sync', { orderId: 'o', updatedAt: 'yesterday' }, 'payload.updatedAt'],
    ['catalog.update', { sku: 'A', attributes: { nested: { x: 1 } } }, 'payload.attributes.nested'],
    ['shipping.notify', { orderId: 'o', carrier: 'c' }, 'payload.trackingCode'],
    ['postsale.event', { orderId: 'o', kind: 'complaint' }, 'payload.kind'],
  ])('rejects %s %j at %s', (type, payload, path) => {
    expect(problemAt(task(type, payload))).toBe(path);
  });

  it('accepts the smallest valid price', () => {
    expect(problemAt(task('price.update', { sku: 'A', amount: 0.01, currency: 'USD' }))).toBeUndefined();
  });
});

describe('BatchBodySchema', () => {
  it.each([1, MAX_BATCH_TASKS])('accepts %d tasks', (n) => {
    expect(BatchBodySchema.safeParse({ tasks: Array.from({ length: n }, () => ({})) }).success).toBe(true);
  });

  it.each([0, MAX_BATCH_TASKS + 1])('rejects %d tasks', (n) => {
    expect(BatchBodySchema.safeParse({ tasks: Array.from({ length: n }, () => ({})) }).success).toBe(false);
  });

  it('caps a batch at the contract’s 100 tasks', () => {
    expect(MAX_BATCH_TASKS).toBe(100);
  });
});

describe('price.update: the currency is an ISO 4217 code', () => {
  it("knows every currency the runtime's ICU data knows (a code the standard added fails here: add it)", () => {
    const known = new Set(ISO_4217_CODES);
    expect(Intl.supportedValuesOf('currency').filter((code) => !known.has(code))).toEqual([]);
  });

  it('lists each code once, sorted (the OpenAPI document shows them in order)', () => {
    expect(ISO_4217_CODES).toEqual([...new Set(ISO_4217_CODES)].sort());
  });

  const price = (currency: unknown) => task('price.update', { sku: 'SKU-1', amount: 1, currency });

  it.each(['BRL', 'USD', 'EUR', 'JPY', 'MXN', 'CLF', 'XAU', 'XXX'])('accepts %s', (currency) => {
    expect(problemAt(price(currency))).toBeUndefined();
  });

  it.each(['XYZ', 'AAA', 'QQQ', 'brl', 'BR', 'BRLX', 7])('rejects %j, naming the field', (currency) => {
    const result = TaskSchema.safeParse(price(currency));
    expect(
      result.success ? undefined : result.error.issues.map((i) => [i.path.join('.'), i.message]),
    ).toEqual([['payload.currency', 'must be an ISO-4217 code such as "BRL"']]);
  });
});
