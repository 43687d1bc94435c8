import { describe, expect, it } from 'vitest';
import {
  attentionVisibilitySeconds,
  WAKE_MARGIN_MS,
  workerTimeoutSeconds,
} from '../../../lambdas/core/timing.js';

/** The exact figures the stack deploys: the bounds in timing.test.ts hold, and these pin the arithmetic. */
describe('timing values', () => {
  it.each([
    // ceil((60 s slice + call timeout + 10 s margin) / 1 s) + 15 s for the end-of-slice writes
    { timeoutMs: undefined, seconds: 100 },
    { timeoutMs: 5_000, seconds: 90 },
    { timeoutMs: 5_500, seconds: 91 },
  ])('the worker times out after $seconds s for $timeoutMs ms calls', ({ timeoutMs, seconds }) => {
    expect(workerTimeoutSeconds(timeoutMs)).toBe(seconds);
  });

  it('keeps an attention hidden for exactly 6 worker timeouts', () => {
    expect(attentionVisibilitySeconds(100)).toBe(600);
  });

  it('adds clock skew and the visibility margin to every wake time: 7 s', () => {
    expect(WAKE_MARGIN_MS).toBe(7_000);
  });
});
