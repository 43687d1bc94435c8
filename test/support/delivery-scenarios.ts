import type { DeliveryLog } from '../../lambdas/core/ports.js';

/**
 * The effect-once record's transitions and what the protocol requires of each, run against the DynamoDB
 * adapter on DynamoDB Local (integration) and against the in-memory one (unit).
 */
const T = 1_800_000_000_000;

export const deliveryScenarios: [string, (log: DeliveryLog, storeId: string) => Promise<unknown>, unknown][] =
  [
    [
      'a claim is exclusive while live, and taken over once expired',
      async (log, s) => {
        const first = (await log.claim(s, 'e', { holder: 'h1', now: T, until: T + 5_000 })).ok;
        const second = (await log.claim(s, 'e', { holder: 'h2', now: T + 1_000, until: T + 6_000 })).ok;
        const takeover = (await log.claim(s, 'e', { holder: 'h3', now: T + 5_001, until: T + 10_000 })).ok;
        const lostSettle = await log.settle(s, 'e', 'h1', {
          status: 'delivered',
          now: T + 5_002,
          countAttempt: true,
        });
        const record = await log.get(s, 'e');
        return {
          first,
          second,
          takeover,
          lostSettle,
          status: record?.status,
          firstAttemptAt: record?.firstAttemptAt,
        };
      },
      {
        first: true,
        second: false,
        takeover: true,
        lostSettle: false,
        status: 'processing',
        firstAttemptAt: T,
      },
    ],
    [
      'delivered and stale are final; pending and dead-lettered can be claimed again',
      async (log, s) => {
        const out: Record<string, boolean> = {};
        for (const status of ['delivered', 'stale', 'pending', 'dead_lettered'] as const) {
          await log.claim(s, status, { holder: 'a', now: T, until: T + 1 });
          await log.settle(s, status, 'a', { status, now: T, countAttempt: false });
          out[status] = (await log.claim(s, status, { holder: 'b', now: T + 10, until: T + 20 })).ok;
        }
        return out;
      },
      { delivered: false, stale: false, pending: true, dead_lettered: true },
    ],
    [
      'settling counts attempts only when a call was made, and keeps the last error',
      async (log, s) => {
        await log.claim(s, 'e', { holder: 'a', now: T, until: T + 1 });
        await log.settle(s, 'e', 'a', {
          status: 'pending',
          now: T + 1,
          countAttempt: true,
          lastError: 'x',
          lastStatus: 503,
        });
        await log.claim(s, 'e', { holder: 'b', now: T + 2, until: T + 3 });
        await log.settle(s, 'e', 'b', {
          status: 'pending',
          now: T + 3,
          countAttempt: false,
          lastError: 'throttled',
          lastStatus: 429,
        });
        const r = await log.get(s, 'e');
        return {
          attempts: r?.attempts,
          lastError: r?.lastError,
          lastStatus: r?.lastStatus,
          holder: r?.holder,
          lastAttemptAt: r?.lastAttemptAt,
        };
      },
      { attempts: 1, lastError: 'throttled', lastStatus: 429, holder: undefined, lastAttemptAt: T + 2 },
    ],
    [
      'the delivered version of an entity only ever rises',
      async (log, s) => {
        const none = await log.deliveredVersion(s, 'sku-1');
        await log.noteDeliveredVersion(s, 'sku-1', 5, T);
        await log.noteDeliveredVersion(s, 'sku-1', 3, T);
        const five = await log.deliveredVersion(s, 'sku-1');
        await log.noteDeliveredVersion(s, 'sku-1', 7, T);
        return {
          none,
          five,
          seven: await log.deliveredVersion(s, 'sku-1'),
          other: await log.deliveredVersion(s, 'sku-2'),
        };
      },
      { none: undefined, five: 5, seven: 7, other: undefined },
    ],
  ];
