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
