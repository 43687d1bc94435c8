import { afterEach, describe, expect, it, vi } from 'vitest';
import { randomIds, systemClock } from '../../../lambdas/adapters/system.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('systemClock', () => {
  it('reads the wall clock', () => {
    vi.useFakeTimers({ now: 1_700_000_000_000 });
    expect(systemClock.now()).toBe(1_700_000_000_000);
  });

  it('sleeps for the given time', async () => {
    vi.useFakeTimers();
    let done = false;
    const sleeping = systemClock.sleep(1_000).then(() => (done = true));
    await vi.advanceTimersByTimeAsync(999);
    const early = done;
    await vi.advanceTimersByTimeAsync(1);
    await sleeping;
    expect([early, done]).toEqual([false, true]);
  });

  it('treats a negative sleep as none', async () => {
    vi.useFakeTimers();
    const sleeping = systemClock.sleep(-50);
    await vi.advanceTimersByTimeAsync(0);
    await expect(sleeping).resolves.toBeUndefined();
  });
});

describe('randomIds', () => {
  it('makes 12-character URL-safe ids', () => {
    expect(randomIds.next()).toMatch(/^[A-Za-z0-9_-]{12}$/);
  });

  it('does not repeat itself', () => {
    const ids = new Set(Array.from({ length: 1000 }, () => randomIds.next()));
    expect(ids.size).toBe(1000);
  });
});
