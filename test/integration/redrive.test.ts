import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoDispatchState } from '../../lambdas/adapters/dynamo-dispatch-state.js';
import { inventoryTasks, startTestStack, waitFor, type TestStack } from '../support/harness.js';

/**
 * Issue #10 point 1 on the emulators (local mode moves dead letters itself, at the store's rate): a
 * redrive keeps the store marked until the move ends, whatever the workers drain meanwhile, and a second
 * redrive while one moves is a clear 409 that changes nothing.
 */
describe('redrive', () => {
  let t: TestStack;
  let token: string;

  beforeAll(async () => {
    t = await startTestStack();
    token = await t.tokenFor('acme');
    await t.createStore('rd', {
      tenantId: 'acme',
      marketplace: 'amazon',
      plan: 'basic',
      overrides: { ratePerSecond: 2 },
    });
  });
  afterAll(async () => {
    await t?.stop();
  });

  it('answers 409 to a second redrive while the first moves, then delivers every task', async () => {
    t.marketplace.setResponder((call) => (call.storeId === 'rd' ? { status: 422 } : undefined));
    await t.submitMany('rd', token, inventoryTasks('rd', 6));
    await waitFor(
      'all six are dead-lettered',
      async () => {
        const view = await t.admin<{ queue: { deadLetters: number } }>('GET', '/admin/stores/rd');
        return view.body.queue.deadLetters === 6;
      },
      30_000,
    );
    t.marketplace.setResponder(undefined);
    const first = await t.admin('POST', '/admin/stores/rd/dead-letters/redrive');
    const second = await t.admin<{ error: { code: string } }>(
      'POST',
      '/admin/stores/rd/dead-letters/redrive',
    );
    const dispatch = new DynamoDispatchState(t.stack.clients.doc, t.stack.resources.tables.dispatch);
    const marked = (await dispatch.read('rd'))?.redriveAt !== undefined;
    await waitFor('every redriven task is delivered', () => t.deliveredCount('rd') === 6, 60_000);
    expect({ first: first.status, second: [second.status, second.body.error.code], marked }).toEqual({
      first: 202,
      second: [409, 'redrive_in_progress'],
      marked: true,
    });
  });

  it('moves the dead letters there were: a task the marketplace refuses again is called once more and stays', async () => {
    await t.createStore('rd-again', { tenantId: 'acme', marketplace: 'amazon', plan: 'basic' });
    t.marketplace.setResponder((call) => (call.storeId === 'rd-again' ? { status: 400 } : undefined));
    await t.submitMany('rd-again', token, inventoryTasks('rd-again', 1));
    const deadLetters = async () =>
      (await t.admin<{ queue: { deadLetters: number } }>('GET', '/admin/stores/rd-again')).body.queue
        .deadLetters;
    const refused = () =>
      t.marketplace.calls.filter((c) => c.storeId === 'rd-again' && c.status === 400).length;
    await waitFor('the task is dead-lettered', async () => (await deadLetters()) === 1, 30_000);
    const first = await t.admin('POST', '/admin/stores/rd-again/dead-letters/redrive');
    await waitFor('the redriven task is refused again', () => refused() === 2, 30_000);
    await waitFor('and is back in the DLQ', async () => (await deadLetters()) === 1, 30_000);
    // The move of the one letter there was has ended: a second redrive is taken (a move until the DLQ is empty
    // would still be running, sending the task round again, and answer 409), and now the task is delivered.
    t.marketplace.setResponder(undefined);
    await waitFor(
      'a second redrive is taken',
      async () => (await t.admin('POST', '/admin/stores/rd-again/dead-letters/redrive')).status === 202,
      30_000,
    );
    await waitFor('the task is delivered', () => t.deliveredCount('rd-again') === 1, 30_000);
    expect({ first: first.status, refused: refused() }).toEqual({ first: 202, refused: 2 });
  });
});
