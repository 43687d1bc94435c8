import { describe, expect, it } from 'vitest';
import {
  deliveredRecord,
  SETTLE_BATCH_MAX,
  SETTLE_RETRY_MS,
  SETTLE_TRIES,
  UnsettledError,
  writeDelivered,
} from '../../../lambdas/core/delivered-settle.js';
import type { DeliveredSettle } from '../../../lambdas/core/ports.js';

/** The batched `delivered` settles after 2xx calls: chunking, retries of the unprocessed, the final refusal. */
const T0 = 1_800_000_000_000;

const settle = (i: number, claimed: Partial<DeliveredSettle['claimed']> = {}): DeliveredSettle => ({
  storeId: 's1',
  eventId: `e${i}`,
  claimed: {
    storeId: 's1',
    eventId: `e${i}`,
    status: 'processing',
    holder: `h${i}`,
    claimUntil: T0 + 30_000,
    updatedAt: T0 - 10,
    ...claimed,
  },
  now: T0,
});

/** A delivery log whose every settleDelivered request answers from `answer` (its unprocessed, or a throw). */
const log = (answer: (chunk: DeliveredSettle[], request: number) => DeliveredSettle[]) => {
  const requests: string[][] = [];
  const sleeps: number[] = [];
  const deps = {
    deliveries: {
      settleDelivered: async (chunk: DeliveredSettle[]) => {
        requests.push(chunk.map((s) => s.eventId));
        return answer(chunk, requests.length);
      },
    },
    clock: { sleep: async (ms: number) => void sleeps.push(ms) },
  };
  return { deps, requests, sleeps };
};

const outcome = async (run: Promise<void>): Promise<string[] | 'written'> => {
  try {
    await run;
    return 'written';
  } catch (error) {
    return error instanceof UnsettledError
      ? error.unsettled.map((s) => s.eventId)
      : [`other: ${String(error)}`];
  }
};

describe('deliveredRecord', () => {
  it('counts the call on the claim’s record, drops the claim, and stamps the 2xx time', () => {
    const record = deliveredRecord(
      settle(1, {
        attempts: 2,
        firstAttemptAt: T0 - 60_000,
        lastAttemptAt: T0 - 5,
        lastError: 'marketplace answered 503',
        lastStatus: 503,
        deadMessageId: 'm-old',
      }),
    );
    expect(record).toEqual({
      storeId: 's1',
      eventId: 'e1',
      status: 'delivered',
      attempts: 3,
      firstAttemptAt: T0 - 60_000,
      lastAttemptAt: T0 - 5,
      lastError: 'marketplace answered 503',
      lastStatus: 503,
      updatedAt: T0,
    });
  });

  it('counts a first call as one attempt', () => {
    expect(deliveredRecord(settle(1)).attempts).toBe(1);
  });
});

describe('writeDelivered', () => {
  it('writes nothing for no settles', async () => {
    const world = log(() => []);
    expect(await outcome(writeDelivered(world.deps, []))).toBe('written');
    expect(world.requests).toEqual([]);
  });

  it(`sends at most ${SETTLE_BATCH_MAX} settles per request, in order`, async () => {
    const world = log(() => []);
    const all = Array.from({ length: SETTLE_BATCH_MAX + 1 }, (_, i) => settle(i));
    expect(await outcome(writeDelivered(world.deps, all))).toBe('written');
    expect(world.requests.map((r) => r.length)).toEqual([SETTLE_BATCH_MAX, 1]);
    expect(world.requests.flat()).toEqual(all.map((s) => s.eventId));
    expect(world.sleeps).toEqual([]);
  });

  it('tries only the unprocessed ones again, after a growing wait', async () => {
    const world = log((chunk, request) => (request < 3 ? chunk.filter((s) => s.eventId === 'e1') : []));
    expect(await outcome(writeDelivered(world.deps, [settle(0), settle(1), settle(2)]))).toBe('written');
    expect({ requests: world.requests, sleeps: world.sleeps }).toEqual({
      requests: [['e0', 'e1', 'e2'], ['e1'], ['e1']],
      sleeps: [SETTLE_RETRY_MS, 2 * SETTLE_RETRY_MS],
    });
  });

  it('tries a failed request’s settles again, and a chunk that failed does not take the others with it', async () => {
    const all = Array.from({ length: SETTLE_BATCH_MAX + 2 }, (_, i) => settle(i));
    const world = log((chunk, request) => {
      if (request === 2) throw new Error('DynamoDB unavailable');
      return [];
    });
    expect(await outcome(writeDelivered(world.deps, all))).toBe('written');
    expect(world.requests.map((r) => r.length)).toEqual([SETTLE_BATCH_MAX, 2, 2]);
    expect(world.requests[2]).toEqual([`e${SETTLE_BATCH_MAX}`, `e${SETTLE_BATCH_MAX + 1}`]);
  });

  it(`gives up after ${SETTLE_TRIES} tries, naming the settles still not written`, async () => {
    const world = log((chunk) => chunk.filter((s) => s.eventId !== 'e0'));
    expect(await outcome(writeDelivered(world.deps, [settle(0), settle(1), settle(2)]))).toEqual([
      'e1',
      'e2',
    ]);
    expect({ requests: world.requests.length, sleeps: world.sleeps }).toEqual({
      requests: SETTLE_TRIES,
      sleeps: [SETTLE_RETRY_MS, 2 * SETTLE_RETRY_MS],
    });
  });

  it('gives up naming a failed request’s settles', async () => {
    const world = log(() => {
      throw new Error('DynamoDB unavailable');
    });
    expect(await outcome(writeDelivered(world.deps, [settle(0)]))).toEqual(['e0']);
    expect(world.requests).toHaveLength(SETTLE_TRIES);
  });
});

describe('UnsettledError', () => {
  // The worker logs it as `error: String(error)`: the only place an operator reads how many calls may be made
  // again (their claims expire unsettled) and why DynamoDB refused the settles.
  it('names the count of unwritten settles and the last error', () => {
    expect(String(new UnsettledError([settle(0), settle(1)], new Error('ThrottlingException')))).toBe(
      'UnsettledError: 2 delivered settle(s) not written: Error: ThrottlingException',
    );
  });

  it('names only the count when no request failed (the items came back unprocessed)', () => {
    expect(String(new UnsettledError([settle(0)], undefined))).toBe(
      'UnsettledError: 1 delivered settle(s) not written',
    );
  });
});
