import { describe, expect, it } from 'vitest';
import { DispatchItemSchema, liveLeases } from '../../../lambdas/core/dispatch-model.js';

const T0 = 1_800_000_000_000;

describe('DispatchItemSchema', () => {
  it('starts a new store at sequence 0, fence 0, no slots', () => {
    expect(DispatchItemSchema.parse({ storeId: 's1' })).toEqual({
      storeId: 's1',
      enqSeq: 0,
      fence: 0,
      slots: {},
    });
  });

  it.each([
    { case: 'a lease without its fence', slot: { s: 'l', at: T0 } },
    { case: 'a negative resend count', slot: { s: 'q', at: T0, r: -1 } },
    { case: 'an unknown state', slot: { s: 'x', at: T0 } },
  ])('refuses $case', ({ slot }) => {
    expect(DispatchItemSchema.safeParse({ storeId: 's1', slots: { a: slot } }).success).toBe(false);
  });
});

describe('liveLeases', () => {
  it('counts leases that expire after now, not queued slots nor leases expiring at or before now', () => {
    const slots = {
      live: { s: 'l', at: T0 + 1, f: 1 },
      ending: { s: 'l', at: T0, f: 2 },
      expired: { s: 'l', at: T0 - 1, f: 3 },
      queued: { s: 'q', at: T0 + 1 },
    } as const;
    expect(liveLeases({ slots }, T0)).toBe(1);
  });
});
