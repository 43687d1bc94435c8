import { DeleteQueueCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoDispatchState } from '../../lambdas/adapters/dynamo-dispatch-state.js';
import { MetricNames } from '../../lambdas/core/names.js';
import { inventoryTasks, startTestStack, waitFor, type TestStack } from '../support/harness.js';

/**
 * Issue #10, "errors back off and surface": a store whose work queue was deleted under it fails every
 * slice. Its slot keeps the streak (the schedule itself, 5 s doubling to 15 min, is unit-tested in
 * attention.test.ts) and says so in a metric, while the other stores carry on.
 */
describe('a store whose slices keep failing', () => {
  let t: TestStack;
  let token: string;

  beforeAll(async () => {
    t = await startTestStack();
    token = await t.tokenFor('acme');
    for (const id of ['broken', 'fine'])
      await t.createStore(id, {
        tenantId: 'acme',
        marketplace: 'amazon',
        plan: 'basic',
        overrides: { ratePerSecond: 50 },
      });
  });
  afterAll(async () => {
    await t?.stop();
  });

  it('backs off with a growing streak on its slot, counted, while another store is served', async () => {
    await t.stack.stopWorkers();
    await t.submitMany('broken', token, inventoryTasks('b', 3));
    const queueUrl = (await t.storeRecord('broken'))?.queueUrl ?? '';
    await t.stack.clients.sqs.send(new DeleteQueueCommand({ QueueUrl: queueUrl }));
    t.stack.startWorkers();
    const dispatch = new DynamoDispatchState(t.stack.clients.doc, t.stack.resources.tables.dispatch);
    const streak = async () => {
      const slots = Object.values((await dispatch.read('broken'))?.slots ?? {});
      return Math.max(0, ...slots.map((slot) => slot.e ?? 0));
    };
    await waitFor('two failed slices in a row', async () => (await streak()) >= 2, 40_000);
    await t.submitMany('fine', token, inventoryTasks('f', 3));
    await waitFor('the other store is served meanwhile', () => t.deliveredCount('fine') === 3, 20_000);
    expect({
      // Backoff counted for each failed slice; the streak is 2 or 3 by now, never reset without a good slice.
      backoffs: t.stack.telemetry.total(MetricNames.sliceErrorBackoff) >= 2,
      streak: (await streak()) >= 2,
    }).toEqual({ backoffs: true, streak: true });
  });
});
