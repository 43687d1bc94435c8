import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LogRecord } from '../../lambdas/adapters/recording-telemetry.js';
import { DEAD_LETTER_SETTLE_MS } from '../../lambdas/core/dead-letter-audit.js';
import { deadLetterTallyId, MetricNames } from '../../lambdas/core/names.js';
import { inventoryTasks, startTestStack, waitFor, type TestStack } from '../support/harness.js';

/**
 * Issue #12 on the emulators: a task that reaches a store's DLQ without the worker (sent there directly, as
 * SQS's redrive policy would move it) is found by the reconciler's sweep and counted in
 * DeadLettersUnaccounted, the alarm's metric; a letter the worker wrote itself is not.
 */
describe('dead letters the worker did not write', () => {
  let t: TestStack;
  const logs: LogRecord[] = [];

  beforeAll(async () => {
    t = await startTestStack({ log: (record) => logs.push(record) });
    const token = await t.tokenFor('acme');
    for (const storeId of ['own', 'moved'])
      await t.createStore(storeId, { tenantId: 'acme', marketplace: 'amazon', plan: 'basic' });
    // `own`: the marketplace rejects its task, so the worker dead-letters it (and counts it).
    t.marketplace.setResponder((call) => (call.storeId === 'own' ? { status: 422 } : undefined));
    await t.submitMany('own', token, inventoryTasks('own', 1));
    await waitFor(
      'the worker dead-letters own’s task',
      () => t.stack.telemetry.total(MetricNames.tasksDeadLettered) === 1,
      30_000,
    );
    // Its count has settled (as it will have a minute later): the audit does not wait for it.
    await t.stack.clients.doc.send(
      new UpdateCommand({
        TableName: t.stack.resources.tables.dispatch,
        Key: { storeId: deadLetterTallyId('own') },
        UpdateExpression: 'SET writtenAt = :past',
        ExpressionAttributeValues: { ':past': Date.now() - DEAD_LETTER_SETTLE_MS - 1_000 },
      }),
    );
    // `moved`: a task lands in its DLQ with no worker involved, as SQS's own move would put it there.
    const moved = await t.storeRecord('moved');
    await t.stack.clients.sqs.send(
      new SendMessageCommand({
        QueueUrl: moved?.deadLetterQueueUrl,
        MessageBody: JSON.stringify({ v: 1, storeId: 'moved', eventId: 'lost-1', type: 'inventory.update' }),
      }),
    );
    await t.stack.reconcileNow();
    await t.stack.reconcileNow();
  });
  afterAll(async () => {
    await t?.stop();
  });

  const flagged = () =>
    logs
      .filter((record) => record.message === 'dead letters the worker did not write')
      .map((record) => [record.fields?.['storeId'], record.fields?.['unaccounted']]);

  it('counts the letter SQS moved in the alarm’s metric, once across runs', () => {
    expect(t.stack.telemetry.total(MetricNames.deadLettersUnaccounted)).toBe(1);
  });

  it('names the store it found it in, not the store whose letter the worker wrote', () => {
    expect(flagged()).toEqual([['moved', 1]]);
  });
});
