import { describe, expect, it } from 'vitest';
import { AuthorizerCache, TenantThrottle } from '../../../bin/local/api-server.js';

const clock = (start = 0) => {
  let now = start;
  return { now: () => now, advance: (ms: number) => (now += ms) };
};

describe('AuthorizerCache (API Gateway’s, emulated)', () => {
  const decision = { principalId: 'tenant:t1', context: { tenantId: 't1' } };

  it('reuses a decision until its TTL ends, then forgets it', () => {
    const c = clock();
    const cache = new AuthorizerCache(60_000, c.now);
    cache.set('Bearer a', decision);
    c.advance(59_999);
    expect(cache.get('Bearer a')).toEqual(decision);
    c.advance(1);
    expect(cache.get('Bearer a')).toBeUndefined();
  });

  it("keeps the usage key with the decision, as API Gateway caches the authorizer's whole answer", () => {
    const cache = new AuthorizerCache(60_000);
    cache.set('Bearer a', { ...decision, usageIdentifierKey: 'key-t1' });
    expect(cache.get('Bearer a')?.usageIdentifierKey).toBe('key-t1');
  });

  it('caches nothing with a TTL of 0', () => {
    const cache = new AuthorizerCache(0);
    cache.set('Bearer a', decision);
    expect(cache.get('Bearer a')).toBeUndefined();
  });

  it('keys on the whole header value', () => {
    const cache = new AuthorizerCache(60_000);
    cache.set('Bearer a', decision);
    expect(cache.get('Bearer b')).toBeUndefined();
  });

  it('stays bounded', () => {
    const cache = new AuthorizerCache(60_000, Date.now, 3);
    for (const key of ['a', 'b', 'c', 'd']) cache.set(key, decision);
    expect(cache.get('d')).toEqual(decision);
    expect(cache.get('a')).toBeUndefined();
  });
});

describe('TenantThrottle (a token bucket per usage key, i.e. per tenant)', () => {
  it('lets a burst through, then answers the seconds to wait', () => {
    const c = clock();
    const throttle = new TenantThrottle(2, 3, c.now);
    expect([throttle.take('t1'), throttle.take('t1'), throttle.take('t1')]).toEqual([
      undefined,
      undefined,
      undefined,
    ]);
    expect(throttle.take('t1')).toBe(1);
  });

  it('refills at the rate', () => {
    const c = clock();
    const throttle = new TenantThrottle(2, 1, c.now);
    throttle.take('t1');
    expect(throttle.take('t1')).toBe(1);
    c.advance(500);
    expect(throttle.take('t1')).toBeUndefined();
  });

  it('rounds Retry-After up to whole seconds at slow rates', () => {
    const c = clock();
    const throttle = new TenantThrottle(0.25, 1, c.now);
    throttle.take('t1');
    expect(throttle.take('t1')).toBe(4);
  });

  it('keeps usage keys (tenants) apart', () => {
    const throttle = new TenantThrottle(1, 1, clock().now);
    throttle.take('t1');
    expect(throttle.take('t1')).toBe(1);
    expect(throttle.take('t2')).toBeUndefined();
  });
});
