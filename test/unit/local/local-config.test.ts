import { describe, expect, it } from 'vitest';
import {
  ADMIN_TOKEN_ADVISED_LENGTH,
  adminTokenWarning,
  loadLocalEnv,
} from '../../../bin/local/local-config.js';

describe("local mode's environment", () => {
  it('takes the contract variables with their defaults when unset', () => {
    const env = loadLocalEnv({});
    expect({
      port: env.PORT,
      data: env.DATA_DIR,
      admin: env.ADMIN_TOKEN,
      market: env.MARKETPLACE_BASE_URL,
    }).toEqual({ port: 3000, data: '.local', admin: undefined, market: undefined });
  });

  it('takes any admin token the operator chooses, a short one too', () => {
    expect(loadLocalEnv({ ADMIN_TOKEN: 'secret' }).ADMIN_TOKEN).toBe('secret');
  });

  it('warns at start-up about a chosen token shorter than 16 characters, not about a longer or a generated one', () => {
    expect([
      adminTokenWarning('secret', 'http://localhost:3000'),
      adminTokenWarning('x'.repeat(ADMIN_TOKEN_ADVISED_LENGTH - 1), 'http://h'),
      adminTokenWarning('x'.repeat(ADMIN_TOKEN_ADVISED_LENGTH), 'http://h'),
      adminTokenWarning(undefined, 'http://h'),
    ]).toEqual([
      'Warning: ADMIN_TOKEN is shorter than 16 characters; anyone who can reach http://localhost:3000 could guess it.',
      'Warning: ADMIN_TOKEN is shorter than 16 characters; anyone who can reach http://h could guess it.',
      undefined,
      undefined,
    ]);
  });

  it.each(['my token', ' ', 'abc '])('refuses %j: a bearer header cannot carry it', (token) => {
    expect(() => loadLocalEnv({ ADMIN_TOKEN: token })).toThrow(
      'invalid local-mode environment: ADMIN_TOKEN: must be one word: "Authorization: Bearer <token>" cannot carry spaces',
    );
  });

  it('refuses an empty admin token, naming the variable', () => {
    expect(() => loadLocalEnv({ ADMIN_TOKEN: '' })).toThrow(
      'invalid local-mode environment: ADMIN_TOKEN: must not be empty (unset it to have one generated)',
    );
  });

  it('refuses a port that is not one, naming the variable', () => {
    expect(() => loadLocalEnv({ PORT: 'eighty' })).toThrow(/^invalid local-mode environment: PORT: /);
  });
});
