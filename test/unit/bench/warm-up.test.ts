import { describe, expect, it } from 'vitest';
import { firstOfPasses } from '../../../bench/pipeline/pipeline.js';

describe('firstOfPasses: the warm-up runs every pass and reports the cold one', () => {
  it.each([
    { passes: 4, runs: 4 },
    { passes: 1, runs: 1 },
    { passes: 0, runs: 1 },
  ])('$passes passes: $runs runs, the first answered', async ({ passes, runs }) => {
    const readings = [1_100, 1_800, 2_200, 2_400];
    let ran = 0;
    const cold = await firstOfPasses(passes, async () => readings[ran++] as number);
    expect({ cold, ran }).toEqual({ cold: 1_100, ran: runs });
  });
});
