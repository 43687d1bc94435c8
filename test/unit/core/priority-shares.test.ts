import { describe, expect, it } from 'vitest';
import { STORE_PRIORITIES, type StorePriority } from '../../../lambdas/core/plans.js';
import {
  DEFAULT_HIGH_HEADROOM_PERCENT,
  DEFAULT_PRIORITY_SHARES,
  eligibleLevels,
  headroomWorkers,
  LevelPicker,
  parsePriorityShares,
} from '../../../lambdas/core/priority-shares.js';

/** Runs `slices` picks one after the other (one worker) among `withWork`; worker time per level. */
const run = (
  picker: LevelPicker,
  withWork: StorePriority[],
  slices: number,
  sliceMs: (level: StorePriority) => number = () => 1_000,
): Record<StorePriority, number> => {
  const time = { high: 0, normal: 0, low: 0 };
  for (let i = 0; i < slices; i++) {
    const level = picker.pick(withWork);
    if (!level) throw new Error('no level picked');
    const started = picker.begin(level);
    picker.end(started, sliceMs(level));
    time[level] += sliceMs(level);
  }
  return time;
};

const shareOf = (time: Record<StorePriority, number>, level: StorePriority): number =>
  (100 * time[level]) / (time.high + time.normal + time.low);

describe('LevelPicker', () => {
  it('gives each level its share of worker time while every level has work', () => {
    const time = run(new LevelPicker(), [...STORE_PRIORITIES], 1_000);
    expect(STORE_PRIORITIES.map((level) => Math.round(shareOf(time, level)))).toEqual([50, 30, 20]);
  });

  it('shares worker time, not slices: a level with long slices gets fewer of them', () => {
    const time = run(new LevelPicker(), [...STORE_PRIORITIES], 2_000, (level) =>
      level === 'low' ? 4_000 : 500,
    );
    expect(Math.abs(shareOf(time, 'low') - 20)).toBeLessThan(1);
    expect(Math.abs(shareOf(time, 'high') - 50)).toBeLessThan(1);
  });

  it('lets an unused share flow to the levels with work, in their proportion', () => {
    const time = run(new LevelPicker(), ['normal', 'low'], 1_000);
    expect(time.high).toBe(0);
    expect(Math.round(shareOf(time, 'normal'))).toBe(60);
  });

  it('picks nothing when no level has work, and the only level with work otherwise', () => {
    const picker = new LevelPicker();
    expect(picker.pick([])).toBeUndefined();
    expect(picker.pick(['low'])).toBe('low');
  });

  it('gives a level back no more than one slice of credit after a spell without work', () => {
    const picker = new LevelPicker();
    run(picker, ['normal', 'low'], 500); // high had no work all along
    const next = Array.from({ length: 10 }, () => {
      const level = picker.pick([...STORE_PRIORITIES]) as StorePriority;
      picker.end(picker.begin(level), 1_000);
      return level;
    });
    // High rejoins at its share (about half of the picks), not with 500 slices to catch up.
    expect(next.filter((level) => level === 'high').length).toBeLessThanOrEqual(6);
    expect(next.filter((level) => level !== 'high').length).toBeGreaterThanOrEqual(4);
  });

  it('never lets a level with work wait more than a few picks (no starvation)', () => {
    const picker = new LevelPicker({ high: 90, normal: 9, low: 1 });
    let sinceLow = 0;
    let longest = 0;
    for (let i = 0; i < 2_000; i++) {
      const level = picker.pick([...STORE_PRIORITIES]) as StorePriority;
      picker.end(picker.begin(level), 1_000);
      sinceLow = level === 'low' ? 0 : sinceLow + 1;
      longest = Math.max(longest, sinceLow);
    }
    expect(longest).toBeLessThanOrEqual(100);
  });

  it('charges a slice when it starts, so concurrent workers spread over the levels', () => {
    const picker = new LevelPicker();
    const first = picker.pick([...STORE_PRIORITIES]) as StorePriority;
    picker.begin(first);
    const second = picker.pick([...STORE_PRIORITIES]) as StorePriority;
    picker.begin(second);
    const third = picker.pick([...STORE_PRIORITIES]) as StorePriority;
    expect([first, second, third]).toEqual(['high', 'normal', 'low']);
  });

  it('orders every level lowest virtual time first', () => {
    const picker = new LevelPicker();
    picker.begin('high');
    expect(picker.order()).toEqual(['normal', 'low', 'high']);
  });
});

describe('parsePriorityShares', () => {
  it.each([
    ['50,30,20', DEFAULT_PRIORITY_SHARES],
    [' 60 , 30 , 10 ', { high: 60, normal: 30, low: 10 }],
    ['low=10,high=70,normal=20', { high: 70, normal: 20, low: 10 }],
  ])('reads %s', (text, shares) => {
    expect(parsePriorityShares(text, 'shares')).toEqual(shares);
  });

  it.each([
    ['50,50', 'must list 3 shares'],
    ['50,30,30', 'add up to 110'],
    ['100,0,0', 'whole percent from 1 to 98'],
    ['50.5,29.5,20', 'whole percent'],
    ['high=50,high=30,low=20', 'names one twice'],
    ['top=50,normal=30,low=20', 'names no level'],
  ])('refuses %s, naming the field and the problem', (text, problem) => {
    expect(() => parsePriorityShares(text, 'AQ_WORKER_POOL_SHARES')).toThrow(
      new RegExp(`AQ_WORKER_POOL_SHARES.*${problem}`),
    );
  });
});

describe('the high headroom', () => {
  it.each([
    { workers: 100, percent: DEFAULT_HIGH_HEADROOM_PERCENT, kept: 5 },
    { workers: 20, percent: DEFAULT_HIGH_HEADROOM_PERCENT, kept: 1 },
    { workers: 19, percent: DEFAULT_HIGH_HEADROOM_PERCENT, kept: 0 },
    { workers: 64, percent: 10, kept: 6 },
    { workers: 100, percent: 0, kept: 0 },
  ])('keeps $kept of $workers workers at $percent %', ({ workers, percent, kept }) => {
    expect(headroomWorkers(workers, percent)).toBe(kept);
  });

  it('lets normal and low take a worker while they hold fewer than all but the headroom', () => {
    expect(eligibleLevels(STORE_PRIORITIES, { workers: 10, lowerBusy: 7, headroom: 2 })).toEqual([
      'high',
      'normal',
      'low',
    ]);
  });

  it('keeps the last workers for high once normal and low hold all the others', () => {
    expect(eligibleLevels(STORE_PRIORITIES, { workers: 10, lowerBusy: 8, headroom: 2 })).toEqual(['high']);
    expect(eligibleLevels(['normal', 'low'], { workers: 10, lowerBusy: 9, headroom: 2 })).toEqual([]);
  });

  it('changes nothing without a headroom: every level with work may take the last worker', () => {
    expect(eligibleLevels(['low'], { workers: 4, lowerBusy: 3, headroom: 0 })).toEqual(['low']);
  });
});
