import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  formatLevelCaps,
  maxLoan,
  parseLevelCaps,
  parseLevelValues,
  planLevelCaps,
  reservedWorkers,
  splitByWeight,
  type LevelLoad,
} from '../../../lambdas/core/level-caps.js';
import { STORE_PRIORITIES, type StorePriority } from '../../../lambdas/core/plans.js';

const FLOORS = { high: 10, normal: 6, low: 4 };
const idle: LevelLoad = { waiting: 0, inFlight: 0 };
const loads = (over: Partial<Record<StorePriority, LevelLoad>>): Record<StorePriority, LevelLoad> => ({
  high: idle,
  normal: idle,
  low: idle,
  ...over,
});

describe('planLevelCaps', () => {
  it('leaves every level at its floor while none has attentions waiting', () => {
    expect(planLevelCaps(FLOORS, loads({ high: { waiting: 0, inFlight: 9 } }))).toEqual(FLOORS);
  });

  it('lends a lone waiting level every idle floor: it runs the whole pool', () => {
    expect(planLevelCaps(FLOORS, loads({ low: { waiting: 50, inFlight: 4 } }))).toEqual({
      high: 10,
      normal: 6,
      low: 20,
    });
  });

  it('lends only the part of a floor its level does not use (each attention in flight may hold a worker)', () => {
    expect(
      planLevelCaps(FLOORS, loads({ low: { waiting: 50, inFlight: 4 }, high: { waiting: 0, inFlight: 7 } })),
    ).toEqual({ high: 10, normal: 6, low: 4 + 3 + 6 });
  });

  it('counts a fractional in-flight count up (an attention in flight may hold a worker)', () => {
    expect(
      planLevelCaps(
        FLOORS,
        loads({ low: { waiting: 1, inFlight: 0 }, normal: { waiting: 0, inFlight: 2.5 } }),
      ).low,
    ).toBe(4 + 10 + 3);
  });

  it('lends nothing from a level using more than its floor, and never lowers a floor', () => {
    expect(
      planLevelCaps(
        FLOORS,
        loads({ normal: { waiting: 3, inFlight: 6 }, high: { waiting: 0, inFlight: 15 } }),
      ),
    ).toEqual({
      high: 10,
      normal: 6 + 4,
      low: 4,
    });
  });

  it('splits what is lent between the waiting levels by their floors (largest remainder)', () => {
    // low's idle floor (4) goes to high and normal, 10 : 6 → 2.5 : 1.5 → 3 and 1 (high's remainder first, on a tie).
    const caps = planLevelCaps(
      FLOORS,
      loads({ high: { waiting: 1, inFlight: 10 }, normal: { waiting: 1, inFlight: 6 } }),
    );
    expect(caps).toEqual({ high: 13, normal: 7, low: 4 });
  });

  it('lends nothing while every level waits (saturated: the floors are the shares)', () => {
    const busy = { waiting: 5, inFlight: 0 };
    expect(planLevelCaps(FLOORS, loads({ high: busy, normal: busy, low: busy }))).toEqual(FLOORS);
  });

  it('never sets a cap above Lambda’s 1,000', () => {
    expect(
      planLevelCaps({ high: 800, normal: 600, low: 200 }, loads({ high: { waiting: 1, inFlight: 0 } })).high,
    ).toBe(1000);
  });

  it('keeps every cap at or above its floor and the caps within the reservation, whatever the counts', () => {
    const load = fc.record({ waiting: fc.nat(5_000), inFlight: fc.nat(5_000) });
    const floor = fc.integer({ min: 2, max: 400 });
    fc.assert(
      fc.property(
        fc.record({ high: floor, normal: floor, low: floor }),
        fc.record({ high: load, normal: load, low: load }),
        (floors, l) => {
          const caps = planLevelCaps(floors, l);
          for (const level of STORE_PRIORITIES) expect(caps[level]).toBeGreaterThanOrEqual(floors[level]);
          const total = STORE_PRIORITIES.reduce((t, level) => t + caps[level], 0);
          expect(total).toBeLessThanOrEqual(reservedWorkers(floors, true));
          // Work-conserving within the reservation: an idle, unused floor is lent whenever some level waits.
          const waits = STORE_PRIORITIES.some((level) => l[level].waiting > 0);
          const lendable = STORE_PRIORITIES.filter((level) => l[level].waiting === 0).reduce(
            (t, level) => t + Math.max(0, floors[level] - l[level].inFlight),
            0,
          );
          const capped = STORE_PRIORITIES.some((level) => caps[level] === 1000);
          if (waits && !capped) expect(total).toBe(floors.high + floors.normal + floors.low + lendable);
        },
      ),
    );
  });
});

describe('reservation', () => {
  it('is the floors plus every floor but the smallest with loans, the floors alone without', () => {
    expect(maxLoan(FLOORS)).toBe(16);
    expect(reservedWorkers(FLOORS, true)).toBe(36);
    expect(reservedWorkers(FLOORS, false)).toBe(20);
  });
});

describe('splitByWeight', () => {
  it('adds up to the total, in proportion', () => {
    expect(splitByWeight(10, { a: 1, b: 1, c: 2 })).toEqual({ a: 3, b: 2, c: 5 });
    expect(splitByWeight(0, { a: 1 })).toEqual({ a: 0 });
    // The largest remainder gets the part left, wherever it stands: 4/3 and 2/3 → 1 and 1, not 2 and 0.
    expect(splitByWeight(2, { a: 2, b: 1 })).toEqual({ a: 1, b: 1 });
    expect(splitByWeight(5, { a: 0 })).toEqual({ a: 0 });
  });
});

describe('the floors and mappings as the stack passes them', () => {
  it('parse', () => {
    expect(parseLevelCaps('high=10,normal=6,low=4', 'F')).toEqual(FLOORS);
    expect(parseLevelValues('low=c, high=a,normal=b', 'M')).toEqual({ high: 'a', normal: 'b', low: 'c' });
  });

  it('format as the stack hands them over, and back', () => {
    expect(formatLevelCaps(FLOORS)).toBe('high=10,normal=6,low=4');
    expect(parseLevelCaps(formatLevelCaps({ high: 7, normal: 3, low: 2 }), 'F')).toEqual({
      high: 7,
      normal: 3,
      low: 2,
    });
  });

  it('name every level missing', () => {
    expect(() => parseLevelValues('high=10', 'M')).toThrow('M: nothing for normal, low');
  });

  it('accept the floors at Lambda’s bounds, 2 and 1000', () => {
    expect(parseLevelCaps('high=1000,normal=2,low=2', 'F')).toEqual({ high: 1000, normal: 2, low: 2 });
  });

  it.each([
    ['high=10,normal=6', /F: nothing for low/],
    ['high=1=2,normal=6,low=4', /'high=1=2' is not level=value/],
    ['high=10,normal=6,low=4,high=3', /'high=3' is not level=value/],
    ['high=10,normal=6,lo=4', /'lo=4' is not level=value/],
    ['high=10,normal=6,low=', /'low=' is not level=value/],
    ['high=10,normal=6,low=1', /the low floor must be a whole number in \[2, 1000\]; got '1'/],
    ['high=1001,normal=6,low=4', /the high floor .* got '1001'/],
    ['high=2.5,normal=6,low=4', /the high floor .* got '2.5'/],
  ])('refuse %s', (text, message) => {
    expect(() => parseLevelCaps(text, 'F')).toThrow(message);
  });
});
