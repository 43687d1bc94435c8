import { createHash, randomBytes } from 'node:crypto';

/** Integrator tokens: 256 random bits, shown once; only their SHA-256 is stored. */
export const TOKEN_PREFIX = 'aqt_';
export const newToken = (): string => `${TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`;
export const hashToken = (token: string): string => createHash('sha256').update(token, 'utf8').digest('hex');

/** The token from an `Authorization: Bearer <token>` header, or undefined. */
export const bearerToken = (header: string | undefined): string | undefined => {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  return match?.[1];
};

/**
 * The public name of a token: the first 12 hex digits (48 bits) of its SHA-256. Derived, so records
 * written before ids existed have one too; it names a token within its tenant for listing, revocation
 * and rotation, and reveals nothing usable: the token has 256 random bits and SHA-256 is preimage-resistant.
 */
export const TOKEN_ID_LENGTH = 12;
export const TOKEN_ID_PATTERN = /^[0-9a-f]{12}$/;
export const tokenIdOf = (tokenHash: string): string => tokenHash.slice(0, TOKEN_ID_LENGTH);

export type TokenStatus = 'active' | 'expiring' | 'expired' | 'revoked';

/** What the authorizer and the listing agree on: a token is usable while active or expiring. */
export const tokenStatus = (record: { expiresAt?: number; revokedAt?: number }, now: number): TokenStatus => {
  if (record.revokedAt !== undefined && record.revokedAt <= now) return 'revoked';
  if (record.expiresAt !== undefined) return record.expiresAt <= now ? 'expired' : 'expiring';
  return 'active';
};

export const isUsable = (status: TokenStatus): boolean => status === 'active' || status === 'expiring';
