import {
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  ListMessageMoveTasksCommand,
  PurgeQueueCommand,
  PurgeQueueInProgress,
  QueueNameExists,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SetQueueAttributesCommand,
  StartMessageMoveTaskCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { DEPLOYMENT_TAG_KEY, QueueNames } from '../core/names.js';
import type { QueueAdmin, QueueCounts } from '../core/ports.js';
import type { StoreRecord } from '../core/store-model.js';
import { STORE_QUEUE } from '../config/topology.js';

type QueuePair = Pick<StoreRecord, 'queueUrl' | 'deadLetterQueueUrl'>;
type StoreQueueSet = QueuePair & Pick<StoreRecord, 'priorityQueueUrl'>;

const count = (value: string | undefined): number => Number(value ?? '0');

/**
 * How dead letters go back: on AWS, SQS's own StartMessageMoveTask; against the emulator, which lacks
 * it, a rate-limited receive → send → delete loop run in the background (local mode only). The emulator
 * lacks RedriveAllowPolicy too, so 'manual' also leaves it out.
 */
export type RedriveMode = 'move-task' | 'manual';

/** Dead-letter queues with a manual move running in this process (local mode runs in one process). */
const manualMoves = new Set<string>();
/** A manual move gives up once it has received this many times the dead letters it set out to move. */
const MOVE_RECEIVE_FACTOR = 3;

/** The queue policy CDK's `enforceSSL` gives the attention queue, for the queues created at run time. */
export const tlsOnlyPolicy = (queueArn: string): string =>
  JSON.stringify({
    Version: '2012-10-17',
    Statement: [
      {
        Sid: 'DenyInsecureTransport',
        Effect: 'Deny',
        Principal: { AWS: '*' },
        Action: 'sqs:*',
        Resource: queueArn,
        Condition: { Bool: { 'aws:SecureTransport': 'false' } },
      },
    ],
  });

/**
 * A store DLQ accepts dead letters from its own work queues only — the work queue and the high-priority
 * queue (SQS's RedriveAllowPolicy, up to 10 sources): no other queue, of this deployment or another, can
 * redrive into it by mistake.
 */
export const redriveAllowPolicy = (...sourceQueueArns: string[]): string =>
  JSON.stringify({ redrivePermission: 'byQueue', sourceQueueArns });

export class SqsQueueAdmin implements QueueAdmin {
  constructor(
    private readonly sqs: SQSClient,
    private readonly prefix: string,
    private readonly redriveMode: RedriveMode = 'move-task',
  ) {}

  private async createOrUpdate(
    name: string,
    attributes: Record<string, string>,
    tags: Record<string, string>,
  ): Promise<string> {
    try {
      const out = await this.sqs.send(
        new CreateQueueCommand({ QueueName: name, Attributes: attributes, tags }),
      );
      return out.QueueUrl as string;
    } catch (error) {
      // Exists with other attributes (a plan change, a retried PUT): keep the queue, update its attributes.
      if (
        !(error instanceof QueueNameExists) &&
        (error as Error).name !== 'QueueNameExists' &&
        (error as Error).name !== 'QueueAlreadyExists'
      )
        throw error;
      const out = await this.sqs.send(new CreateQueueCommand({ QueueName: name }));
      const url = out.QueueUrl as string;
      await this.sqs.send(new SetQueueAttributesCommand({ QueueUrl: url, Attributes: attributes }));
      return url;
    }
  }

  private async arnOf(queueUrl: string): Promise<string> {
    const out = await this.sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] }),
    );
    return out.Attributes?.QueueArn as string;
  }

  async createStoreQueues(storeId: string, opts: { maxReceiveCount: number; tags: Record<string, string> }) {
    // The deployment tag lets an operator (and `npm run teardown`) tell this deployment's queues apart.
    const tags = { ...opts.tags, [DEPLOYMENT_TAG_KEY]: this.prefix };
    const deadLetterQueueUrl = await this.createOrUpdate(
      QueueNames.storeDeadLetterQueue(this.prefix, storeId),
      {
        MessageRetentionPeriod: String(STORE_QUEUE.deadLetterRetentionSeconds),
        SqsManagedSseEnabled: 'true',
      },
      tags,
    );
    const deadLetterTargetArn = await this.arnOf(deadLetterQueueUrl);
    const queueName = QueueNames.storeQueue(this.prefix, storeId);
    const priorityName = QueueNames.storePriorityQueue(this.prefix, storeId);
    const arnPrefix = deadLetterTargetArn.slice(0, deadLetterTargetArn.lastIndexOf(':') + 1);
    const queueArn = `${arnPrefix}${queueName}`;
    const priorityArn = `${arnPrefix}${priorityName}`;
    // The DLQ's ARN only exists once it does; its policies follow (before the work queues name it as their
    // DLQ, which SQS checks against the RedriveAllowPolicy), and the work queues' ARNs are known up front.
    await this.sqs.send(
      new SetQueueAttributesCommand({
        QueueUrl: deadLetterQueueUrl,
        Attributes: {
          Policy: tlsOnlyPolicy(deadLetterTargetArn),
          // The emulator (manual redrive mode) knows neither move tasks nor this attribute.
          ...(this.redriveMode === 'move-task'
            ? { RedriveAllowPolicy: redriveAllowPolicy(queueArn, priorityArn) }
            : {}),
        },
      }),
    );
    // Both work queues alike (retention, visibility, encryption), and both dead-letter into the one DLQ.
    const workQueueAttributes = (arn: string) => ({
      MessageRetentionPeriod: String(STORE_QUEUE.retentionSeconds),
      VisibilityTimeout: String(STORE_QUEUE.visibilityTimeoutSeconds),
      SqsManagedSseEnabled: 'true',
      RedrivePolicy: JSON.stringify({ deadLetterTargetArn, maxReceiveCount: opts.maxReceiveCount }),
      Policy: tlsOnlyPolicy(arn),
    });
    const queueUrl = await this.createOrUpdate(queueName, workQueueAttributes(queueArn), tags);
    const priorityQueueUrl = await this.createOrUpdate(priorityName, workQueueAttributes(priorityArn), tags);
    return { queueUrl, deadLetterQueueUrl, priorityQueueUrl };
  }

  /** The store queue's three counts, one GetQueueAttributes request. */
  private async mainCounts(queueUrl: string): Promise<Omit<QueueCounts, 'deadLetters'>> {
    const out = await this.sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: queueUrl,
        AttributeNames: [
          'ApproximateNumberOfMessages',
          'ApproximateNumberOfMessagesNotVisible',
          'ApproximateNumberOfMessagesDelayed',
        ],
      }),
    );
    return {
      backlog: count(out.Attributes?.ApproximateNumberOfMessages),
      inFlight: count(out.Attributes?.ApproximateNumberOfMessagesNotVisible),
      delayed: count(out.Attributes?.ApproximateNumberOfMessagesDelayed),
    };
  }

  async pending(queueUrl: string): Promise<number> {
    const { backlog, inFlight, delayed } = await this.mainCounts(queueUrl);
    return backlog + inFlight + delayed;
  }

  async counts(store: StoreQueueSet): Promise<QueueCounts> {
    const [main, high, dlq] = await Promise.all([
      this.mainCounts(store.queueUrl),
      store.priorityQueueUrl === undefined ? undefined : this.mainCounts(store.priorityQueueUrl),
      this.sqs.send(
        new GetQueueAttributesCommand({
          QueueUrl: store.deadLetterQueueUrl,
          AttributeNames: ['ApproximateNumberOfMessages'],
        }),
      ),
    ]);
    return {
      backlog: main.backlog + (high?.backlog ?? 0),
      inFlight: main.inFlight + (high?.inFlight ?? 0),
      delayed: main.delayed + (high?.delayed ?? 0),
      deadLetters: count(dlq.Attributes?.ApproximateNumberOfMessages),
    };
  }

  async redrive(store: QueuePair, ratePerSecond: number): Promise<{ moving: number }> {
    const { deadLetters } = await this.counts(store);
    if (deadLetters === 0) return { moving: 0 };
    if (this.redriveMode === 'move-task') {
      const [sourceArn, destinationArn] = await Promise.all([
        this.arnOf(store.deadLetterQueueUrl),
        this.arnOf(store.queueUrl),
      ]);
      await this.sqs.send(
        new StartMessageMoveTaskCommand({
          SourceArn: sourceArn,
          DestinationArn: destinationArn,
          MaxNumberOfMessagesPerSecond: Math.max(1, Math.floor(ratePerSecond)),
        }),
      );
    } else {
      manualMoves.add(store.deadLetterQueueUrl);
      this.moveManually(store, ratePerSecond, deadLetters)
        .catch((error: unknown) => process.emitWarning(`manual redrive stopped: ${String(error)}`))
        .finally(() => manualMoves.delete(store.deadLetterQueueUrl));
    }
    return { moving: deadLetters };
  }

  async redriveRunning(store: QueuePair): Promise<boolean> {
    if (this.redriveMode === 'manual') return manualMoves.has(store.deadLetterQueueUrl);
    // The most recent move task from this DLQ comes first; SQS runs one at a time per source queue.
    const out = await this.sqs.send(
      new ListMessageMoveTasksCommand({
        SourceArn: await this.arnOf(store.deadLetterQueueUrl),
        MaxResults: 1,
      }),
    );
    return out.Results?.[0]?.Status === 'RUNNING';
  }

  async purge(queueUrl: string): Promise<'purged' | 'in_progress'> {
    try {
      await this.sqs.send(new PurgeQueueCommand({ QueueUrl: queueUrl }));
      return 'purged';
    } catch (error) {
      // SQS allows one purge per queue per 60 s; the earlier one is still deleting.
      if (error instanceof PurgeQueueInProgress || (error as Error).name === 'PurgeQueueInProgress')
        return 'in_progress';
      throw error;
    }
  }

  /**
   * Emulator stand-in for StartMessageMoveTask: same observable effect, same rate cap, at-least-once. Like the move
   * task, it moves the dead letters counted when it started (`toMove`), not until the DLQ is empty: a task the
   * marketplace refuses again is back in the DLQ within a second, and a move until empty sent it round and round
   * (a black-box check of local mode: 414 calls for one store's three tasks after one redrive). It counts, it does
   * not track which letters it took (the emulator answers oldest first, so the originals come before letters that
   * arrive meanwhile). It ends at the first empty receive: a letter whose send failed stays hidden for its 30 s
   * visibility and is left for a later redrive. A move that ends short of its count says so (a warning), and one
   * that keeps finding letters it cannot send gives up once it has received MOVE_RECEIVE_FACTOR times its count.
   */
  private async moveManually(store: QueuePair, ratePerSecond: number, toMove: number): Promise<void> {
    let moved = 0;
    for (let received = 0; moved < toMove && received < MOVE_RECEIVE_FACTOR * toMove;) {
      const out = await this.sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: store.deadLetterQueueUrl,
          MaxNumberOfMessages: Math.min(10, toMove - moved),
          WaitTimeSeconds: 1,
          VisibilityTimeout: 30,
        }),
      );
      const messages = out.Messages ?? [];
      if (messages.length === 0) break;
      received += messages.length;
      const started = Date.now();
      const sent = await this.sqs.send(
        new SendMessageBatchCommand({
          QueueUrl: store.queueUrl,
          Entries: messages.map((m, i) => ({ Id: String(i), MessageBody: m.Body ?? '' })),
        }),
      );
      // Only what reached the store queue leaves the DLQ; the rest reappears after its visibility.
      const failed = new Set((sent.Failed ?? []).map((f) => f.Id));
      const back = messages.map((m, i) => ({ m, id: String(i) })).filter(({ id }) => !failed.has(id));
      if (back.length === 0) continue;
      moved += back.length;
      await this.sqs.send(
        new DeleteMessageBatchCommand({
          QueueUrl: store.deadLetterQueueUrl,
          Entries: back.map(({ m, id }) => ({ Id: id, ReceiptHandle: m.ReceiptHandle ?? '' })),
        }),
      );
      const minMs = (1000 * messages.length) / Math.max(1, ratePerSecond);
      const elapsed = Date.now() - started;
      if (elapsed < minMs) await new Promise((r) => setTimeout(r, minMs - elapsed));
    }
    if (moved < toMove)
      process.emitWarning(
        `manual redrive of ${store.deadLetterQueueUrl} moved ${moved} of the ${toMove} dead letters it counted; redrive again for the rest`,
      );
  }
}
