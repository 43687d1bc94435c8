import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sqsSafeJson, sqsSafeText, unpairedSurrogatePath } from '../../../lambdas/core/sqs-text.js';

/** What SQS and the emulator both accept, code unit by code unit (fauxqs's own list). */
// eslint-disable-next-line no-control-regex -- tab, newline and carriage return are part of the list
const SQS_ACCEPTS = /^[\x09\x0A\x0D\x20-\uD7FF\uE000-\uFFFD]*$/;

describe('sqsSafeJson', () => {
  it.each([
    ['an emoji', 'Camiseta 😀 promo', '"Camiseta \\ud83d\\ude00 promo"'],
    ['a mathematical letter', '𝕿', '"\\ud835\\udd7f"'],
    ['the noncharacters SQS refuses', '\uFFFE\uFFFF', '"\\ufffe\\uffff"'],
    ['a control character', 'a\u0001b', '"a\\u0001b"'],
    ['text SQS takes as it is', 'ação 中文 \uFDD0', '"ação 中文 \uFDD0"'],
  ])('escapes %s and nothing else', (_what, text, encoded) => {
    expect(sqsSafeJson(text)).toBe(encoded);
  });

  it('gives back what JSON.stringify would, code unit for code unit, in text SQS accepts', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.string({ unit: 'binary' }), (value, text) => {
        const original = { value, text, [text]: text };
        const encoded = sqsSafeJson(original);
        expect(encoded).toMatch(SQS_ACCEPTS);
        // Plain JSON's own losses (-0 becomes 0) aside, the value is unchanged.
        expect(JSON.parse(encoded)).toEqual(JSON.parse(JSON.stringify(original)));
      }),
      { numRuns: 2000 },
    );
  });
});

describe('sqsSafeText', () => {
  it('replaces each code unit SQS refuses with U+FFFD', () => {
    expect(sqsSafeText('ok 😀\u0000\uFFFE')).toBe('ok \uFFFD\uFFFD\uFFFD\uFFFD');
  });
});

describe('unpairedSurrogatePath', () => {
  it.each([
    ['a lone high surrogate in a value', { payload: { title: 'a\uD800b' } }, ['payload', 'title']],
    ['a lone low surrogate at the end', { payload: { title: 'ab\uDC00' } }, ['payload', 'title']],
    ['a reversed pair', { payload: { d: ['x', '\uDE00\uD83D'] } }, ['payload', 'd', 1]],
    ['a key', { payload: { ['k\uD800']: 1 } }, ['payload', 'k\uD800']],
  ])('finds %s', (_what, value, path) => {
    expect(unpairedSurrogatePath(value)).toEqual(path);
  });

  it.each([
    ['paired surrogates', { t: '😀𝕿' }],
    ['noncharacters', { t: '\uFFFE\uFFFF\uFDD0' }],
    ['numbers, booleans and null', { a: 1, b: true, c: null }],
  ])('accepts %s', (_what, value) => {
    expect(unpairedSurrogatePath(value)).toBeUndefined();
  });
});
