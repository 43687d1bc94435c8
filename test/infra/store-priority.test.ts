import { describe, expect, it } from 'vitest';
import { DEFAULT_PRIORITY_SHARES } from '../../lambdas/core/priority-shares.js';
import { levelConcurrency } from '../../lib/priority-concurrency.js';
import { EnvNames } from '../../lambdas/config/env-names.js';
import {
  arnOf,
  buildStack,
  logicalIdOf,
  resourceById,
  roleIdOf,
  statementsOfRole,
  synthStack,
} from './synth-stack.js';

/** Store priority on AWS: each level's event source cap is its share of the pool (+ burst); the sum is reserved. */
const { stack, template } = synthStack({
  workerPoolSize: 40,
  workerPoolShares: { high: 60, normal: 30, low: 10 },
  workerPoolBurst: 5,
});

describe('store priority: level concurrency on AWS', () => {
  it.each([
    ['high', 24 + 5],
    ['normal', 12 + 5],
    ['low', 4 + 5],
  ] as const)('the %s event source may run its share of the pool plus the burst (%s)', (level, cap) => {
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: arnOf(stack.attention.levels[level]),
      ScalingConfig: { MaximumConcurrency: cap },
    });
  });

  it('reserves the floors (pool + 3 × burst) and the largest loan (every floor but the smallest), so no level is throttled', () => {
    expect(
      resourceById(template, logicalIdOf(stack.workers.function)).Properties?.ReservedConcurrentExecutions,
    ).toBe(40 + 3 * 5 + (29 + 17));
  });

  it('hands the reconciler the floors and the mappings, and lets it read the queues and set the mappings only', () => {
    const env = resourceById(template, logicalIdOf(stack.reconciler.function)).Properties?.Environment as {
      Variables: Record<string, unknown>;
    };
    expect(env.Variables[EnvNames.levelFloors]).toBe('high=29,normal=17,low=9');
    expect(JSON.stringify(env.Variables[EnvNames.levelMappings])).toMatch(/high=.*normal=.*low=/);
    const statements = statementsOfRole(template, roleIdOf(stack.reconciler.function)).filter((s) =>
      JSON.stringify(s.Action).includes('EventSourceMapping'),
    );
    expect(statements).toHaveLength(1);
    expect(statements[0]?.Action).toEqual([
      'lambda:GetEventSourceMapping',
      'lambda:UpdateEventSourceMapping',
    ]);
    expect(JSON.stringify(statements[0]?.Resource)).toContain('event-source-mapping');
  });
});

describe('store priority on AWS with loans off (-c workerPoolLoans=false)', () => {
  const off = synthStack({
    workerPoolSize: 40,
    workerPoolShares: { high: 60, normal: 30, low: 10 },
    workerPoolBurst: 5,
    workerPoolLoans: false,
  });

  it('reserves the floors alone (pool + 3 × burst): the pool is a hard bound', () => {
    expect(
      resourceById(off.template, logicalIdOf(off.stack.workers.function)).Properties
        ?.ReservedConcurrentExecutions,
    ).toBe(40 + 3 * 5);
  });

  it('gives the reconciler neither floors nor mappings', () => {
    const env = resourceById(off.template, logicalIdOf(off.stack.reconciler.function)).Properties
      ?.Environment as {
      Variables: Record<string, unknown>;
    };
    expect(env.Variables).not.toHaveProperty(EnvNames.levelFloors);
    expect(env.Variables).not.toHaveProperty(EnvNames.levelMappings);
  });
});

describe('levelConcurrency', () => {
  it.each([
    [20, { high: 10, normal: 6, low: 4 }],
    [7, { high: 4, normal: 2, low: 2 }],
    [2, { high: 2, normal: 2, low: 2 }],
    [1000, { high: 500, normal: 300, low: 200 }],
  ])('splits a pool of %s by the default shares, at least 2 each (Lambda’s minimum)', (pool, caps) => {
    expect(levelConcurrency(pool, DEFAULT_PRIORITY_SHARES, 0)).toEqual(caps);
  });

  it('splits by largest remainder, so the parts add up to the pool', () => {
    expect(levelConcurrency(10, { high: 34, normal: 33, low: 33 }, 0)).toEqual({
      high: 4,
      normal: 3,
      low: 3,
    });
  });

  it('never exceeds Lambda’s maximum of 1000 per event source', () => {
    expect(levelConcurrency(1000, DEFAULT_PRIORITY_SHARES, 1000).high).toBe(1000);
  });

  it.each([-1, 1.5])('refuses a burst of %s', (burst) => {
    expect(() => levelConcurrency(20, DEFAULT_PRIORITY_SHARES, burst)).toThrow(
      /workerPoolBurst must be an integer/,
    );
  });
});

describe('store priority props are checked at synth', () => {
  it('refuses shares that do not add up to 100', () => {
    expect(() => buildStack({ workerPoolShares: { high: 50, normal: 30, low: 30 } })).toThrow(
      /priorityShares: the shares must add up to 100; they add up to 110/,
    );
  });

  it('refuses a zero share (a level that would starve)', () => {
    expect(() => buildStack({ workerPoolShares: { high: 70, normal: 30, low: 0 } })).toThrow(
      /the low share must be a whole percent from 1 to 98/,
    );
  });
});
