import { describe, expect, it } from 'vitest';
import { matchRoute, routeById, type RouteId } from '../../../lambdas/core/routes.js';

/** Every route's method and path as the contract and the operator docs spell them (routes.test.ts has the matcher). */
describe('route table', () => {
  it.each<[string, string, RouteId, Record<string, string>]>([
    ['GET', '/admin/tenants/t1/tokens', 'listTokens', { tenantId: 't1' }],
    ['POST', '/admin/tenants/t1/tokens/k1/revoke', 'revokeToken', { tenantId: 't1', tokenId: 'k1' }],
    ['POST', '/admin/tenants/t1/tokens/k1/rotate', 'rotateToken', { tenantId: 't1', tokenId: 'k1' }],
    ['POST', '/admin/tenants/t1/usage-key', 'backfillUsageKey', { tenantId: 't1' }],
    ['POST', '/admin/usage-keys/backfill', 'backfillUsageKeys', {}],
    ['GET', '/admin/backlog', 'listBacklog', {}],
    ['POST', '/admin/stores/s1/queue/purge', 'purgeStoreQueue', { storeId: 's1' }],
    ['GET', '/admin/stores/s1/measures', 'storeMeasures', { storeId: 's1' }],
  ])('%s %s is %s', (method, path, id, pathParameters) => {
    expect(matchRoute(method, path)).toEqual({ kind: 'match', route: routeById(id), pathParameters });
  });

  it('finds a route by its id', () => {
    expect(routeById('listBacklog')).toEqual({
      id: 'listBacklog',
      method: 'GET',
      resource: '/admin/backlog',
      fn: 'admin',
      auth: 'iam',
    });
  });
});
