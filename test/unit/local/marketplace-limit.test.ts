import { describe, expect, it } from 'vitest';
import { FIXED_WINDOW_SECONDS, MarketplaceLimit } from '../../../bin/local/marketplace-limit.js';

/** The local marketplace's `window` mode: a fixed window's quota, its limit stated without the window. */
describe('MarketplaceLimit, window mode', () => {
  const W = FIXED_WINDOW_SECONDS * 1000;
  const start = 1_800_000_000_000; // a multiple of the window: windows are aligned to it

  it('allows perSecond × 5 s calls per window, counting them down, with whole seconds to the reset', () => {
    const limit = new MarketplaceLimit({ perSecond: 1, headers: 'window' });
    const answers = [0, 100, 1_300, 2_000, 4_100].map((at) => limit.take('s1', start + at));
    expect(answers.map((a) => a.allowed)).toEqual([true, true, true, true, true]);
    expect(answers.map((a) => a.headers['ratelimit-remaining'])).toEqual(['4', '3', '2', '1', '0']);
    expect(answers.map((a) => a.headers['ratelimit-reset'])).toEqual(['5', '5', '4', '3', '1']);
    // The limit names no window: read as per second, it says five times the real rate.
    expect(answers[0]?.headers['ratelimit-limit']).toBe('5');
  });

  it('answers over the quota with Remaining 0 and no Retry-After, until the next window', () => {
    const limit = new MarketplaceLimit({ perSecond: 1, headers: 'window' });
    for (let i = 0; i < 5; i++) limit.take('s1', start + i);
    const over = limit.take('s1', start + 2_500);
    expect(over).toEqual({
      allowed: false,
      headers: { 'ratelimit-limit': '5', 'ratelimit-remaining': '0', 'ratelimit-reset': '3' },
    });
    // Another store has its own window; the next window starts afresh.
    expect(limit.take('s2', start + 2_500).allowed).toBe(true);
    expect(limit.take('s1', start + W).headers['ratelimit-remaining']).toBe('4');
  });

  it('follows a changed limit from the next call', () => {
    const limit = new MarketplaceLimit({ perSecond: 1, headers: 'window' });
    limit.setPerSecond(2);
    expect(limit.take('s1', start).headers).toMatchObject({
      'ratelimit-limit': '10',
      'ratelimit-remaining': '9',
    });
  });

  it('never states a negative Remaining when the quota falls below what the window already used', () => {
    const limit = new MarketplaceLimit({ perSecond: 2, headers: 'window' });
    for (let i = 0; i < 8; i++) limit.take('s1', start + i);
    limit.setPerSecond(1);
    expect(limit.take('s1', start + 100)).toMatchObject({
      allowed: false,
      headers: { 'ratelimit-limit': '5', 'ratelimit-remaining': '0' },
    });
  });
});
