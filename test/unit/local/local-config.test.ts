import { describe, expect, it } from 'vitest';
import { ADMIN_TOKEN_ADVISED_LENGTH, loadLocalEnv } from '../../../bin/local/local-config.js';

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

  it('takes any admin token the operator chooses, a short one too (start-up warns about it)', () => {
    expect(loadLocalEnv({ ADMIN_TOKEN: 'secret' }).ADMIN_TOKEN).toBe('secret');
    expect('secret'.length).toBeLessThan(ADMIN_TOKEN_ADVISED_LENGTH);
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
