import { DEFAULT_PRIORITY_SHARES } from '../../lambdas/core/priority-shares.js';
import { reservedWorkers } from '../../lambdas/core/level-caps.js';
import { levelConcurrency } from '../../lib/priority-concurrency.js';
import { describe, expect, it } from 'vitest';
import { CONFIRM_EVENT_SOURCE, WORKER_EVENT_SOURCE } from '../../lambdas/config/topology.js';
import { MAX_MARKETPLACE_TIMEOUT_MS } from '../../lambdas/core/timing.js';
import { MIN_UNRESERVED_CONCURRENCY } from '../../lib/concurrency-check.js';
import { buildStack } from './synth-stack.js';

// Construction only: each stack is rejected (or accepted) before anything is synthesized.
describe('invalid props are rejected before synth', () => {
  it.each(['AQ', '1aq', '', 'a'.repeat(17), 'aq_1', 'aq.s', 'aq-s'])("queuePrefix '%s'", (queuePrefix) => {
    expect(() => buildStack({ queuePrefix })).toThrow(/queuePrefix must match/);
  });

  it.each([WORKER_EVENT_SOURCE.minPoolSize - 1, WORKER_EVENT_SOURCE.maxPoolSize + 1, 2.5, Number.NaN])(
    'workerPoolSize %s',
    (workerPoolSize) => {
      expect(() => buildStack({ workerPoolSize })).toThrow(
        `workerPoolSize must be an integer between ${WORKER_EVENT_SOURCE.minPoolSize} and ${WORKER_EVENT_SOURCE.maxPoolSize}`,
      );
    },
  );

  it.each([WORKER_EVENT_SOURCE.minBatchSize - 1, WORKER_EVENT_SOURCE.maxBatchSize + 1, 1.5])(
    'workerBatchSize %s',
    (workerBatchSize) => {
      expect(() => buildStack({ workerBatchSize })).toThrow(
        `workerBatchSize must be an integer between ${WORKER_EVENT_SOURCE.minBatchSize} and ${WORKER_EVENT_SOURCE.maxBatchSize}`,
      );
    },
  );

  it.each([
    ['http://marketplace.example.com', /must use https/],
    ['marketplace.example.com', /must be an absolute https URL/],
    ['https://user:secret@marketplace.example.com', /must not contain credentials/],
    ['https://marketplace.example.com/?key=1', /without query or fragment/],
  ])("marketplaceBaseUrl '%s'", (marketplaceBaseUrl, message) => {
    expect(() => buildStack({ marketplaceBaseUrl })).toThrow(message);
  });

  it.each([0, -1, Number.POSITIVE_INFINITY])('apiThrottling.rateLimit %s', (rateLimit) => {
    expect(() => buildStack({ apiThrottling: { rateLimit } })).toThrow(
      /throttling.rateLimit must be a positive number/,
    );
  });

  it.each([0, -5])('apiThrottling.burstLimit %s', (burstLimit) => {
    expect(() => buildStack({ apiThrottling: { burstLimit } })).toThrow(
      /throttling.burstLimit must be a positive number/,
    );
  });

  it.each([0, -1, Number.NaN])('apiTenantThrottling.rateLimit %s', (rateLimit) => {
    expect(() => buildStack({ apiTenantThrottling: { rateLimit } })).toThrow(
      /tenantThrottling.rateLimit must be a positive number/,
    );
  });

  it.each([0, 2.5, -3])('apiTenantThrottling.burstLimit %s', (burstLimit) => {
    expect(() => buildStack({ apiTenantThrottling: { burstLimit } })).toThrow(
      /tenantThrottling.burstLimit must be an integer/,
    );
  });

  it('runtimeSettings.marketplaceTimeoutMs above the ceiling the worker timeout is sized for', () => {
    expect(() =>
      buildStack({ runtimeSettings: { marketplaceTimeoutMs: MAX_MARKETPLACE_TIMEOUT_MS + 1 } }),
    ).toThrow(/runtimeSettings.marketplaceTimeoutMs must be an integer/);
  });

  it('a negative runtime setting', () => {
    expect(() => buildStack({ runtimeSettings: { emptyPollSeconds: -1 } })).toThrow(
      /runtimeSettings.emptyPollSeconds must be an integer/,
    );
  });
});

describe('boundary props are accepted', () => {
  it.each([WORKER_EVENT_SOURCE.minPoolSize, WORKER_EVENT_SOURCE.maxPoolSize])(
    'workerPoolSize %s',
    (workerPoolSize) => {
      // The level caps (at least Lambda's 2 each: 6 for a pool of 2) with the largest loan, the confirm
      // queue's cap and the reconciler's 1 reserved, plus the 100 Lambda keeps unreserved.
      const reserved =
        reservedWorkers(levelConcurrency(workerPoolSize, DEFAULT_PRIORITY_SHARES, 0), true) +
        CONFIRM_EVENT_SOURCE.maxConcurrency;
      expect(() =>
        buildStack({
          workerPoolSize,
          accountConcurrencyLimit: reserved + 1 + MIN_UNRESERVED_CONCURRENCY,
        }),
      ).not.toThrow();
    },
  );

  it.each(['a', 'a'.repeat(16), 'prodeu1'])("queuePrefix '%s'", (queuePrefix) => {
    expect(() => buildStack({ queuePrefix })).not.toThrow();
  });
});

describe('reserved concurrency fits the account limit', () => {
  // The worker's pool of 20, 16 for loans and the confirm queue's 5; the reconciler's 1.
  const RESERVED = 20 + 16 + CONFIRM_EVENT_SOURCE.maxConcurrency + 1;
  // Loans off: the pool and the confirm queue's cap; the reconciler's 1.
  const RESERVED_NO_LOANS = 20 + CONFIRM_EVENT_SOURCE.maxConcurrency + 1;

  it(`accepts the defaults (${RESERVED} reserved) under the default limit of 1000`, () => {
    expect(RESERVED).toBe(42);
    expect(() => buildStack()).not.toThrow();
  });

  it('refuses a reservation that leaves fewer than 100 unreserved, naming the limit it needs', () => {
    const limit = RESERVED + MIN_UNRESERVED_CONCURRENCY - 1;
    expect(() => buildStack({ accountConcurrencyLimit: limit })).toThrow(
      new RegExp(
        `reserves ${RESERVED} concurrent executions .* needs an account concurrency limit of at least ${RESERVED + MIN_UNRESERVED_CONCURRENCY}; accountConcurrencyLimit is ${limit}\\.`,
      ),
    );
  });

  it('accepts exactly 100 left unreserved', () => {
    expect(() =>
      buildStack({ accountConcurrencyLimit: RESERVED + MIN_UNRESERVED_CONCURRENCY }),
    ).not.toThrow();
  });

  it(`reserves the pool and the confirm queue's ${CONFIRM_EVENT_SOURCE.maxConcurrency} alone with loans off (${RESERVED_NO_LOANS} with the reconciler)`, () => {
    const limit = RESERVED_NO_LOANS + MIN_UNRESERVED_CONCURRENCY;
    expect(() => buildStack({ accountConcurrencyLimit: limit, workerPoolLoans: false })).not.toThrow();
    expect(() => buildStack({ accountConcurrencyLimit: limit - 1, workerPoolLoans: false })).toThrow(
      new RegExp(`reserves ${RESERVED_NO_LOANS} concurrent executions`),
    );
  });

  it('refuses the largest pool under the default limit', () => {
    expect(() => buildStack({ workerPoolSize: WORKER_EVENT_SOURCE.maxPoolSize })).toThrow(
      /-c accountConcurrencyLimit=/,
    );
  });
});
