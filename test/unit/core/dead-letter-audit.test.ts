import { describe, expect, it, vi } from 'vitest';
import { RecordingTelemetry } from '../../../lambdas/adapters/recording-telemetry.js';
import {
  auditDeadLetters,
  auditStoreDeadLetters,
  DEAD_LETTER_SETTLE_MS,
  type DeadLetterTally,
} from '../../../lambdas/core/dead-letter-audit.js';
import { deliverTask, type DeliverDeps } from '../../../lambdas/core/deliver-task.js';
import type { WorkMessage } from '../../../lambdas/core/messages.js';
import type { Marketplace, ReceivedMessage, TaskQueues } from '../../../lambdas/core/ports.js';
import { MemoryDeadLetterLedger } from '../../support/memory-dead-letter-ledger.js';
import { MemoryDeliveryLog } from '../../support/memory-delivery-log.js';
import { fixedClock, storeRecord, T0 } from '../support/fixtures.js';

const settled = (tally: DeadLetterTally): DeadLetterTally => ({
  ...tally,
  writtenAt: T0 - DEAD_LETTER_SETTLE_MS,
});

describe('auditDeadLetters', () => {
  it.each<[string, DeadLetterTally | undefined, number, number]>([
    ['a store never audited, whose DLQ holds one letter the worker never wrote', undefined, 1, 1],
    ['a store never audited, whose DLQ holds only the worker’s letters', settled({ written: 2 }), 2, 0],
    [
      'growth beyond what the worker wrote since the last audit',
      settled({ written: 5, seenDepth: 3, seenWritten: 4 }),
      6,
      2,
    ],
    ['growth matched by the worker’s letters', settled({ written: 5, seenDepth: 3, seenWritten: 3 }), 5, 0],
    ['a DLQ emptied by a redrive', settled({ written: 5, seenDepth: 5, seenWritten: 5 }), 0, 0],
    ['a DLQ that shrank and grew again by SQS’s move', { written: 5, seenDepth: 0, seenWritten: 5 }, 1, 1],
  ])('reports %s', (_case, tally, depth, unaccounted) => {
    expect(auditDeadLetters(tally, depth, T0).unaccounted).toBe(unaccounted);
  });

  it('moves the baseline to what it saw', () => {
    expect(auditDeadLetters(settled({ written: 5, seenDepth: 3, seenWritten: 4 }), 6, T0).settle).toEqual({
      seenDepth: 6,
      seenWritten: 5,
    });
  });

  it('moves the baseline when only the worker wrote (the depth unchanged: its letters were redriven)', () => {
    expect(auditDeadLetters(settled({ written: 3, seenDepth: 2, seenWritten: 2 }), 2, T0).settle).toEqual({
      seenDepth: 2,
      seenWritten: 3,
    });
  });

  it('writes nothing when nothing moved', () => {
    expect(
      auditDeadLetters(settled({ written: 2, seenDepth: 2, seenWritten: 2 }), 2, T0).settle,
    ).toBeUndefined();
  });

  it('writes nothing for a store never dead-lettered whose DLQ is empty', () => {
    expect(auditDeadLetters(undefined, 0, T0)).toEqual({ unaccounted: 0 });
  });

  it('waits while the worker’s latest letter may not show in the depth yet', () => {
    const recent = { written: 3, writtenAt: T0 - DEAD_LETTER_SETTLE_MS + 1, seenDepth: 0, seenWritten: 0 };
    expect(auditDeadLetters(recent, 9, T0)).toEqual({ unaccounted: 0 });
  });

  it('audits once the worker’s latest letter has settled', () => {
    const settledNow = { written: 3, writtenAt: T0 - DEAD_LETTER_SETTLE_MS, seenDepth: 0, seenWritten: 0 };
    expect(auditDeadLetters(settledNow, 4, T0).unaccounted).toBe(1);
  });
});

describe('auditStoreDeadLetters', () => {
  const setup = (depth: number) => {
    const ledger = new MemoryDeadLetterLedger();
    const pending = vi.fn(async (_url: string) => {
      ledger.calls.push('depth');
      return depth;
    });
    const telemetry = new RecordingTelemetry();
    const deps = { queues: { pending }, deadLetterLedger: ledger, clock: fixedClock(), telemetry };
    return { ledger, pending, deps };
  };

  it('reads the DLQ’s depth before the tally (the worker counts before it sends)', async () => {
    const { ledger, deps } = setup(0);
    await auditStoreDeadLetters(deps, storeRecord());
    expect(ledger.calls.slice(0, 2)).toEqual(['depth', 'read store-1']);
  });

  it('counts the store’s DLQ, not its work queue', async () => {
    const { pending, deps } = setup(0);
    await auditStoreDeadLetters(deps, storeRecord());
    expect(pending.mock.calls).toEqual([[storeRecord().deadLetterQueueUrl]]);
  });

  it('returns the letters SQS moved by itself', async () => {
    const { deps } = setup(2);
    await expect(auditStoreDeadLetters(deps, storeRecord())).resolves.toMatchObject({ unaccounted: 2 });
  });

  it('keeps the baseline so the same letters are reported once', async () => {
    const { deps } = setup(2);
    await auditStoreDeadLetters(deps, storeRecord());
    await expect(auditStoreDeadLetters(deps, storeRecord())).resolves.toMatchObject({ unaccounted: 0 });
  });

  it('warns about a store only when letters are unaccounted for', async () => {
    const warned = async (depth: number): Promise<string[]> => {
      const messages: string[] = [];
      const { deps } = setup(depth);
      const telemetry = new RecordingTelemetry((record) => messages.push(record.message));
      await auditStoreDeadLetters({ ...deps, telemetry }, storeRecord());
      return messages;
    };
    expect([await warned(0), await warned(1)]).toEqual([[], ['dead letters the worker did not write']]);
  });

  it('accounts for the letters the worker wrote', async () => {
    const { ledger, deps } = setup(2);
    await ledger.noteWritten('store-1', T0 - DEAD_LETTER_SETTLE_MS);
    await ledger.noteWritten('store-1', T0 - DEAD_LETTER_SETTLE_MS);
    await expect(auditStoreDeadLetters(deps, storeRecord())).resolves.toMatchObject({ unaccounted: 0 });
  });
});

describe('the worker’s dead-letter tally', () => {
  const work: WorkMessage = {
    v: 1,
    storeId: 'store-1',
    eventId: 'evt-1',
    type: 'inventory.update',
    payload: { sku: 'A' },
    acceptedAt: T0,
  };
  const message: ReceivedMessage = {
    messageId: 'm1',
    receiptHandle: 'rh1',
    body: JSON.stringify(work),
    receiveCount: 1,
    sentAt: T0,
  };
  const depsWith = (ledger: DeliverDeps['deadLetterLedger'], order: string[]): DeliverDeps => ({
    tasks: { deadLetter: async () => void order.push('send') } as unknown as TaskQueues,
    marketplace: { deliver: async () => ({ kind: 'permanent', status: 422, error: 'no' }) } as Marketplace,
    deliveries: new MemoryDeliveryLog(),
    clock: fixedClock(),
    ids: { next: () => 'attempt-1' },
    telemetry: new RecordingTelemetry(),
    random: () => 0.5,
    settings: { marketplaceTimeoutMs: 5_000 },
    deadLetterLedger: ledger,
  });

  it('counts a dead letter before it sends it', async () => {
    const order: string[] = [];
    const ledger = { noteWritten: async () => void order.push('count') };
    await deliverTask(depsWith(ledger, order), storeRecord(), { maxAttempts: 3 }, message);
    expect(order).toEqual(['count', 'send']);
  });

  it('counts nothing for a task it delivers', async () => {
    const order: string[] = [];
    const ledger = { noteWritten: async () => void order.push('count') };
    const deps = {
      ...depsWith(ledger, order),
      marketplace: { deliver: async () => ({ kind: 'ok', status: 200 }) },
    };
    await deliverTask(deps as DeliverDeps, storeRecord(), { maxAttempts: 3 }, message);
    expect(order).toEqual([]);
  });

  it('dead-letters the task even when the count fails', async () => {
    const order: string[] = [];
    const ledger = { noteWritten: async () => Promise.reject(new Error('DynamoDB down')) };
    const result = await deliverTask(depsWith(ledger, order), storeRecord(), { maxAttempts: 3 }, message);
    expect({ result, order }).toEqual({ result: { kind: 'done', as: 'dead_lettered' }, order: ['send'] });
  });
});
