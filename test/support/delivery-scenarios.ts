import type { DeliveryLog, DeliveryRecord } from '../../lambdas/core/ports.js';

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
        const first = (await log.claim(s, 'e', { holder: 'h1', now: T, until: T + 5_000, messageId: 'm1' }))
          .ok;
        const second = (
          await log.claim(s, 'e', { holder: 'h2', now: T + 1_000, until: T + 6_000, messageId: 'm1' })
        ).ok;
        const takeover = (
          await log.claim(s, 'e', { holder: 'h3', now: T + 5_001, until: T + 10_000, messageId: 'm1' })
        ).ok;
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
      "a pending record with a task-scope 429's retryAt refuses claims until then; the claim after it clears it",
      async (log, s) => {
        await log.claim(s, 'e', { holder: 'a', now: T, until: T + 5_000, messageId: 'm1' });
        const settled = await log.settle(s, 'e', 'a', {
          status: 'pending',
          now: T + 100,
          countAttempt: false,
          lastError: 'throttled (429)',
          retryAt: T + 3_100,
        });
        const early = await log.claim(s, 'e', {
          holder: 'b',
          now: T + 3_099,
          until: T + 9_000,
          messageId: 'm2',
        });
        const onTime = await log.claim(s, 'e', {
          holder: 'c',
          now: T + 3_100,
          until: T + 9_000,
          messageId: 'm3',
        });
        // A settle without one (a 5xx) leaves none: the next claim is free at once.
        await log.settle(s, 'e', 'c', { status: 'pending', now: T + 3_200, countAttempt: true });
        const after5xx = (
          await log.claim(s, 'e', { holder: 'd', now: T + 3_201, until: T + 9_000, messageId: 'm4' })
        ).ok;
        return {
          settled,
          early: { ok: early.ok, status: early.record?.status, retryAt: early.record?.retryAt },
          onTime: { ok: onTime.ok, holder: onTime.record?.holder, retryAt: onTime.record?.retryAt },
          after5xx,
        };
      },
      {
        settled: true,
        early: { ok: false, status: 'pending', retryAt: T + 3_100 },
        onTime: { ok: true, holder: 'c', retryAt: undefined },
        after5xx: true,
      },
    ],
    [
      'delivered and stale are final; pending and dead-lettered can be claimed again',
      async (log, s) => {
        const out: Record<string, boolean> = {};
        for (const status of ['delivered', 'stale', 'pending', 'dead_lettered'] as const) {
          await log.claim(s, status, { holder: 'a', now: T, until: T + 1, messageId: 'm1' });
          await log.settle(s, status, 'a', { status, now: T, countAttempt: false, messageId: 'm1' });
          out[status] = (
            await log.claim(s, status, { holder: 'b', now: T + 10, until: T + 20, messageId: 'm2' })
          ).ok;
        }
        return out;
      },
      { delivered: false, stale: false, pending: true, dead_lettered: true },
    ],
    [
      'a dead-lettered task is claimed again by a redriven copy, never by the message it was dead-lettered from',
      async (log, s) => {
        await log.claim(s, 'e', { holder: 'a', now: T, until: T + 1, messageId: 'original' });
        await log.settle(s, 'e', 'a', {
          status: 'dead_lettered',
          now: T,
          countAttempt: true,
          messageId: 'original',
          deadAttempts: 1,
        });
        const original = await log.claim(s, 'e', {
          holder: 'b',
          now: T + 10,
          until: T + 20,
          messageId: 'original',
        });
        const redriven = await log.claim(s, 'e', {
          holder: 'c',
          now: T + 30,
          until: T + 40,
          messageId: 'copy',
        });
        return {
          original: original.ok,
          seen: original.record?.status,
          redriven: redriven.ok,
          after: redriven.record?.deadMessageId,
          // Where the redriven copy's fresh attempt budget starts: written with the dead-letter, kept by the claim.
          budget: [redriven.record?.attempts, redriven.record?.deadAttempts],
        };
      },
      { original: false, seen: 'dead_lettered', redriven: true, after: undefined, budget: [1, 1] },
    ],
    [
      'settling counts attempts only when a call was made, and keeps the last error',
      async (log, s) => {
        await log.claim(s, 'e', { holder: 'a', now: T, until: T + 1, messageId: 'm1' });
        await log.settle(s, 'e', 'a', {
          status: 'pending',
          now: T + 1,
          countAttempt: true,
          lastError: 'x',
          lastStatus: 503,
        });
        await log.claim(s, 'e', { holder: 'b', now: T + 2, until: T + 3, messageId: 'm1' });
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
      'a batch of delivered settles writes whole records unconditionally, over a claim taken over meanwhile',
      async (log, s) => {
        const first = await log.claim(s, 'e1', { holder: 'h1', now: T, until: T + 5_000, messageId: 'm1' });
        const other = await log.claim(s, 'e2', { holder: 'h2', now: T, until: T + 5_000, messageId: 'm2' });
        // e1's claim outlived: another attempt took it over (a stall); the 2xx is still the truth.
        await log.claim(s, 'e1', { holder: 'late', now: T + 5_001, until: T + 10_000, messageId: 'm1' });
        const left = await log.settleDelivered(
          [first, other].map((claim, i) => ({
            storeId: s,
            eventId: `e${i + 1}`,
            claimed: claim.record as DeliveryRecord,
            now: T + 6_000,
          })),
        );
        const lateSettle = await log.settle(s, 'e1', 'late', {
          status: 'pending',
          now: T + 7_000,
          countAttempt: true,
        });
        const again = (
          await log.claim(s, 'e1', { holder: 'h3', now: T + 20_000, until: T + 25_000, messageId: 'm3' })
        ).ok;
        const records = await Promise.all(['e1', 'e2'].map((e) => log.get(s, e)));
        return {
          left,
          lateSettle,
          again,
          records: records.map((r) => [
            r?.status,
            r?.attempts,
            r?.holder,
            r?.claimUntil,
            r?.firstAttemptAt,
            r?.updatedAt,
          ]),
        };
      },
      {
        left: [],
        lateSettle: false,
        again: false,
        records: [
          ['delivered', 1, undefined, undefined, T, T + 6_000],
          ['delivered', 1, undefined, undefined, T, T + 6_000],
        ],
      },
    ],
    [
      'the version mark rises, never falls, and refuses a lower version with the mark',
      async (log, s) => {
        const none = await log.deliveredVersion(s, 'sku-1');
        const five = [await log.markVersion(s, 'sku-1', 5, T), await log.deliveredVersion(s, 'sku-1')];
        const again = await log.markVersion(s, 'sku-1', 5, T + 1);
        const three = [await log.markVersion(s, 'sku-1', 3, T + 2), await log.deliveredVersion(s, 'sku-1')];
        const seven = [await log.markVersion(s, 'sku-1', 7, T + 3), await log.deliveredVersion(s, 'sku-1')];
        return { none, five, again, three, seven, other: await log.deliveredVersion(s, 'sku-2') };
      },
      {
        none: undefined,
        five: [{ ok: true }, 5],
        again: { ok: true },
        three: [{ ok: false, current: 5 }, 5],
        seven: [{ ok: true }, 7],
        other: undefined,
      },
    ],
  ];
