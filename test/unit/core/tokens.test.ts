import { describe, expect, it } from 'vitest';
import { bearerToken, hashToken, newToken, TOKEN_PREFIX } from '../../../lambdas/core/tokens.js';

describe('newToken', () => {
  it('is the prefix and 256 random bits in base64url', () => {
    expect(newToken()).toMatch(new RegExp(`^${TOKEN_PREFIX}[A-Za-z0-9_-]{43}$`));
  });

  it('never repeats', () => {
    const tokens = new Set(Array.from({ length: 500 }, () => newToken()));
    expect(tokens.size).toBe(500);
  });
});

describe('hashToken', () => {
  it('is the hex SHA-256 of the token', () => {
    expect(hashToken('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });

  it('differs for different tokens', () => {
    expect(hashToken('aqt_a')).not.toBe(hashToken('aqt_b'));
  });
});

describe('bearerToken', () => {
  it.each<[string | undefined, string | undefined]>([
    ['Bearer aqt_x', 'aqt_x'],
    ['bearer aqt_x', 'aqt_x'],
    ['BEARER   aqt_x  ', 'aqt_x'],
    ['aqt_x', undefined],
    ['Basic dXNlcjpwYXNz', undefined],
    ['Bearer', undefined],
    ['Bearer ', undefined],
    ['Bearer a b', undefined],
    ['', undefined],
    [undefined, undefined],
  ])('reads %j as %j', (header, token) => {
    expect(bearerToken(header)).toBe(token);
  });
});
