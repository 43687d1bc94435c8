import { afterEach, describe, expect, it, vi } from 'vitest';
import { EnvNames } from '../../../lambdas/config/env-names.js';
import { FULL_ENV } from '../support/fixtures.js';

/** Each entry point, and one variable it cannot start without. */
const HANDLERS = [
  ['admin', EnvNames.queuePrefix, () => import('../../../lambdas/handlers/admin.js')],
  [
    'attention-worker',
    EnvNames.marketplaceBaseUrl,
    () => import('../../../lambdas/handlers/attention-worker.js'),
  ],
  ['authorizer', EnvNames.tokensTable, () => import('../../../lambdas/handlers/authorizer.js')],
  ['ingest', EnvNames.deliveriesTable, () => import('../../../lambdas/handlers/ingest.js')],
  ['reconciler', EnvNames.dispatchTable, () => import('../../../lambdas/handlers/reconciler.js')],
] as const;

const stubEnv = (env: Record<string, string>) => {
  for (const name of Object.values(EnvNames)) vi.stubEnv(name, undefined);
  for (const [name, value] of Object.entries(env)) vi.stubEnv(name, value);
};

afterEach(() => {
  vi.unstubAllEnvs();
  vi.resetModules();
});

describe('lambdas/handlers', () => {
  it.each(HANDLERS)(
    '%s builds its handler from the process environment at cold start',
    async (_name, _v, load) => {
      stubEnv(FULL_ENV);
      const module = await load();
      expect(module.handler).toBeTypeOf('function');
    },
  );

  it.each(HANDLERS)('%s fails at cold start naming a missing %s', async (_name, variable, load) => {
    stubEnv(Object.fromEntries(Object.entries(FULL_ENV).filter(([key]) => key !== variable)));
    await expect(load()).rejects.toThrow(new RegExp(`${variable}: `));
  });
});
