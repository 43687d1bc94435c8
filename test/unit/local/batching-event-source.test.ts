import {
  DeleteMessageBatchCommand,
  ReceiveMessageCommand,
  SQSClient,
  type Message,
} from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import type { SQSEvent } from 'aws-lambda';
import { afterEach, describe, expect, it } from 'vitest';
import { BatchingEventSource } from '../../../bin/local/batching-event-source.js';

const idle = () => new Promise((r) => setTimeout(r, 50));

/** A queue of `n` messages behind a mocked SQS client: each receive takes up to its MaxNumberOfMessages. */
const queueOf = (n: number) => {
  const sqs = mockClient(SQSClient);
  const held: Message[] = Array.from({ length: n }, (_, i) => ({
    MessageId: `m${i}`,
    ReceiptHandle: `r${i}`,
    Body: '{}',
  }));
  sqs.on(ReceiveMessageCommand).callsFake(async (input: { MaxNumberOfMessages: number }) => {
    // An empty queue answers after a while, as a long poll would (the mock answers at once otherwise).
    if (held.length === 0) await idle();
    return { Messages: held.splice(0, input.MaxNumberOfMessages) };
  });
  sqs.on(DeleteMessageBatchCommand).resolves({});
  return { sqs, held };
};

describe('the local stand-in for an event source with a batching window', () => {
  let source: BatchingEventSource | undefined;
  afterEach(async () => {
    await source?.stop();
    source = undefined;
  });

  it('gathers full batches from a backlog, and deletes the records that succeeded in batches of ten', async () => {
    const { sqs } = queueOf(250);
    const batches: number[] = [];
    source = new BatchingEventSource(
      new SQSClient({ region: 'us-east-1' }),
      async (event: SQSEvent) => {
        batches.push(event.Records.length);
        // The first record of each batch fails: it stays on the queue.
        return { batchItemFailures: [{ itemIdentifier: event.Records[0]?.messageId ?? '' }] };
      },
      { queue: { url: 'q', arn: 'arn' }, batchSize: 100, windowMs: 1_000, maxConcurrency: 1, waitSeconds: 0 },
    );
    source.start();
    await expect.poll(() => source?.stats.records, { timeout: 5_000 }).toBe(250);
    expect(batches).toEqual([100, 100, 50]);
    expect(source.stats).toMatchObject({ invocations: 3, records: 250, failedRecords: 3 });
    const deleted = sqs.commandCalls(DeleteMessageBatchCommand).map((c) => c.args[0].input.Entries?.length);
    expect(deleted.every((n) => n !== undefined && n <= 10)).toBe(true);
    expect(deleted.reduce((a, b) => (a ?? 0) + (b ?? 0), 0)).toBe(247);
  });

  it('invokes what it gathered when a receive fails mid-window, instead of dropping it', async () => {
    const sqs = mockClient(SQSClient);
    sqs
      .on(ReceiveMessageCommand)
      .resolvesOnce({ Messages: [{ MessageId: 'a', ReceiptHandle: 'ra', Body: '{}' }] })
      .rejectsOnce(new Error('throttled'))
      .callsFake(async () => {
        await idle();
        return { Messages: [] };
      });
    sqs.on(DeleteMessageBatchCommand).resolves({});
    const seen: string[][] = [];
    const errors: unknown[] = [];
    source = new BatchingEventSource(
      new SQSClient({ region: 'us-east-1' }),
      async (event: SQSEvent) => {
        seen.push(event.Records.map((r) => r.messageId));
      },
      {
        queue: { url: 'q', arn: 'arn' },
        batchSize: 100,
        windowMs: 1_000,
        maxConcurrency: 1,
        waitSeconds: 0,
        onError: (error) => errors.push(error),
      },
    );
    source.start();
    await expect.poll(() => seen.length, { timeout: 5_000 }).toBe(1);
    expect(seen).toEqual([['a']]);
    expect(String(errors[0])).toContain('throttled');
  });
});
