import { describe, expect, it } from 'vitest';
import { DEFAULT_PRIORITY_SHARES } from '../../lambdas/core/priority-shares.js';
import { levelConcurrency } from '../../lib/priority-concurrency.js';
import { EnvNames } from '../../lambdas/config/env-names.js';
import { CONFIRM_EVENT_SOURCE } from '../../lambdas/config/topology.js';
import {
  actionsAllowedOn,
  arnOf,
  asArray,
  buildStack,
  logicalIdOf,
  resourceById,
  resourcesOfType,
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

  it("reserves the floors (pool + 3 × burst), the largest loan (every floor but the smallest) and the confirm queue's cap, so no level is throttled", () => {
    expect(
      resourceById(template, logicalIdOf(stack.workers.function)).Properties?.ReservedConcurrentExecutions,
    ).toBe(40 + 3 * 5 + (29 + 17) + CONFIRM_EVENT_SOURCE.maxConcurrency);
  });

  /** The logical id of the event source mapping that reads `level`'s queue. */
  const mappingOf = (level: 'high' | 'normal' | 'low'): string => {
    const ids = resourcesOfType(template, 'AWS::Lambda::EventSourceMapping')
      .filter(
        ([, m]) =>
          JSON.stringify(m.Properties?.['EventSourceArn']) ===
          JSON.stringify(arnOf(stack.attention.levels[level])),
      )
      .map(([id]) => id);
    expect(ids).toHaveLength(1);
    return ids[0] as string;
  };

  it('hands the reconciler the floors, each level its own mapping, and loans on', () => {
    const env = resourceById(template, logicalIdOf(stack.reconciler.function)).Properties?.Environment as {
      Variables: Record<string, unknown>;
    };
    expect(env.Variables[EnvNames.levelFloors]).toBe('high=29,normal=17,low=9');
    expect(env.Variables[EnvNames.levelLoans]).toBe('on');
    expect(env.Variables[EnvNames.levelMappings]).toEqual({
      'Fn::Join': [
        '',
        [
          'high=',
          { Ref: mappingOf('high') },
          ',normal=',
          { Ref: mappingOf('normal') },
          ',low=',
          { Ref: mappingOf('low') },
        ],
      ],
    });
  });

  it('lets the reconciler read and update exactly the three mappings, nothing else of Lambda', () => {
    const statements = statementsOfRole(template, roleIdOf(stack.reconciler.function)).filter((s) =>
      JSON.stringify(s.Action).includes('lambda:'),
    );
    expect(statements).toHaveLength(1);
    expect(statements[0]?.Action).toEqual([
      'lambda:GetEventSourceMapping',
      'lambda:UpdateEventSourceMapping',
    ]);
    const resources = asArray(statements[0]?.Resource).map((r) => JSON.stringify(r));
    expect(resources).toHaveLength(3);
    for (const level of ['high', 'normal', 'low'] as const)
      expect(
        resources.filter((r) => r.endsWith(`":event-source-mapping:",{"Ref":"${mappingOf(level)}"}]]}`)),
      ).toHaveLength(1);
  });

  it("lets the reconciler read each level queue's counts", () => {
    for (const level of ['high', 'normal', 'low'] as const)
      expect(
        actionsAllowedOn(template, roleIdOf(stack.reconciler.function), arnOf(stack.attention.levels[level])),
      ).toContain('sqs:GetQueueAttributes');
  });
});

describe('store priority on AWS with loans off (-c workerPoolLoans=false)', () => {
  const off = synthStack({
    workerPoolSize: 40,
    workerPoolShares: { high: 60, normal: 30, low: 10 },
    workerPoolBurst: 5,
    workerPoolLoans: false,
  });

  it("reserves the floors (pool + 3 × burst) and the confirm queue's cap, no loan: the pool is a hard bound", () => {
    expect(
      resourceById(off.template, logicalIdOf(off.stack.workers.function)).Properties
        ?.ReservedConcurrentExecutions,
    ).toBe(40 + 3 * 5 + CONFIRM_EVENT_SOURCE.maxConcurrency);
  });

  it('still gives the reconciler the floors and mappings, with loans off (it brings loaned caps back)', () => {
    const env = resourceById(off.template, logicalIdOf(off.stack.reconciler.function)).Properties
      ?.Environment as {
      Variables: Record<string, unknown>;
    };
    expect(env.Variables[EnvNames.levelFloors]).toBe('high=29,normal=17,low=9');
    expect(env.Variables).toHaveProperty(EnvNames.levelMappings);
    expect(env.Variables[EnvNames.levelLoans]).toBe('off');
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
