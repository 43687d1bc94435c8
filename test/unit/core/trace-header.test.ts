import { describe, expect, it } from 'vitest';
import { traceHeaderFor, traceIdOf } from '../../../lambdas/core/trace-header.js';

const ID = '1-5759e988-bd862e3fe1be46a994272793';

describe('traceIdOf', () => {
  it.each([
    [`Root=${ID}`, ID],
    [`Root=${ID};Parent=53995c3f42cd8ad8;Sampled=1`, ID],
    [`Self=1-67891234-12456789abcdef012345678;Root=${ID};Sampled=1`, ID],
    [`root=${ID}`, ID],
    [` Root = ${ID} ; Sampled=0`, ID],
  ])('reads the Root of %s', (header, id) => {
    expect(traceIdOf(header)).toBe(id);
  });

  it.each([
    [undefined],
    [''],
    ['Root=not-a-trace'],
    ['Root=2-5759e988-bd862e3fe1be46a994272793'],
    ['Root=1-5759E988-BD862E3FE1BE46A994272793'],
    ['Root=1-5759e988-bd862e3fe1be46a99427279'],
    ['Parent=53995c3f42cd8ad8;Sampled=1'],
    [`Root=${ID};${'x'.repeat(256)}`],
    // Anchored: an id with anything before or after it is not one.
    [`Root=x${ID}`],
    [`Root=${ID}0`],
    // A well-formed id under another key, or a key with no value, is not the Root.
    [`Parent=${ID}`],
    [`Root;Parent=${ID}`],
  ])('ignores %s', (header) => {
    expect(traceIdOf(header)).toBeUndefined();
  });
});

describe('traceIdOf at the 256-character limit', () => {
  const padded = (length: number): string => {
    const head = `Root=${ID};Sampled=1;Lineage=`;
    return head + 'a'.repeat(length - head.length);
  };
  it('reads a header of exactly 256 characters', () => {
    expect(traceIdOf(padded(256))).toBe(ID);
  });
  it('ignores one of 257', () => {
    expect(traceIdOf(padded(257))).toBeUndefined();
  });
});

describe('traceHeaderFor', () => {
  it('forwards only the trace id, which traceIdOf reads back', () => {
    expect([traceHeaderFor(ID), traceIdOf(traceHeaderFor(ID))]).toEqual([`Root=${ID}`, ID]);
  });
});
