import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { traceIdOf } from '../../lambdas/core/trace-header.js';
import { inventoryTasks, startTestStack, waitFor, type TestStack } from '../support/harness.js';

/**
 * Issue #12's "a trace follows one task from the ingest request to the marketplace call", on the emulators:
 * the trace id of the request that submitted a task (its X-Amzn-Trace-Id) travels in the task's message
 * through SQS and reaches the marketplace on the worker's call for that task; a task sent without one reaches
 * it without the header.
 */
describe('one task’s trace, ingest to marketplace', () => {
  let t: TestStack;
  let token: string;
  const SINGLE = '1-6750b2c1-0123456789abcdef01234567';
  const BATCH = '1-6750b2c1-fedcba9876543210fedcba98';

  const traceAt = (eventId: string) =>
    t.marketplace.calls.find((call) => (call.body as { eventId?: string }).eventId === eventId)?.traceHeader;

  beforeAll(async () => {
    t = await startTestStack();
    token = await t.tokenFor('acme');
    await t.createStore('tr', { tenantId: 'acme', marketplace: 'amazon', plan: 'pro' });
    const [single, untraced] = inventoryTasks('one', 2);
    await t.request('POST', '/v1/stores/tr/tasks', {
      token,
      body: single,
      headers: { 'x-amzn-trace-id': `Root=${SINGLE};Parent=53995c3f42cd8ad8;Sampled=1` },
    });
    await t.request('POST', '/v1/stores/tr/tasks', { token, body: untraced });
    await t.request('POST', '/v1/stores/tr/tasks/batch', {
      token,
      body: { tasks: inventoryTasks('many', 3) },
      headers: { 'x-amzn-trace-id': `Root=${BATCH};Sampled=1` },
    });
    await waitFor('all five tasks are delivered', () => t.deliveredCount('tr') >= 5, 30_000);
  });
  afterAll(async () => {
    await t?.stop();
  });

  it('reaches the marketplace with the trace id of the request that submitted it', () => {
    expect(traceIdOf(traceAt('one-0'))).toBe(SINGLE);
  });

  it('gives every task of a batch its request’s trace id', () => {
    expect(['many-0', 'many-1', 'many-2'].map((id) => traceIdOf(traceAt(id)))).toEqual([BATCH, BATCH, BATCH]);
  });

  it('sends no trace header for a task submitted without one', () => {
    expect(traceAt('one-1')).toBeUndefined();
  });
});
