import { describe, expect, it } from 'vitest';
import { matchRoute, routeById, ROUTES, type RouteId } from '../../../lambdas/core/routes.js';

describe('matchRoute', () => {
  it.each<[string, string, RouteId, Record<string, string>]>([
    ['POST', '/v1/stores/s1/tasks', 'submitTask', { storeId: 's1' }],
    ['POST', '/v1/stores/s1/tasks/batch', 'submitBatch', { storeId: 's1' }],
    ['GET', '/v1/stores/s1/tasks/evt:1.a', 'taskStatus', { storeId: 's1', eventId: 'evt:1.a' }],
    ['GET', '/v1/stores/s1/tasks/batch', 'taskStatus', { storeId: 's1', eventId: 'batch' }],
    ['PUT', '/admin/stores/s1', 'putStore', { storeId: 's1' }],
    ['GET', '/admin/stores/s1', 'getStore', { storeId: 's1' }],
    ['PATCH', '/admin/stores/s1', 'patchStore', { storeId: 's1' }],
    ['POST', '/admin/stores/s1/dead-letters/redrive', 'redriveDeadLetters', { storeId: 's1' }],
    ['POST', '/admin/tenants/t1/tokens', 'createToken', { tenantId: 't1' }],
  ])('%s %s is %s', (method, path, id, pathParameters) => {
    expect(matchRoute(method, path)).toEqual({ kind: 'match', route: routeById(id), pathParameters });
  });

  it('treats malformed percent-encoding as no route, rather than throwing', () => {
    expect(matchRoute('GET', '/admin/stores/%E0%A4%A')).toEqual({ kind: 'not_found' });
  });

  it('decodes percent-encoded parameters', () => {
    expect(matchRoute('GET', '/v1/stores/s1/tasks/a%3Ab')).toMatchObject({
      pathParameters: { storeId: 's1', eventId: 'a:b' },
    });
  });

  it.each(['/', '/v1/stores', '/v1/stores/s1/tasks/', '/v1/stores/s1/tasks/a/b', '/admin/stores', '/health'])(
    '%s is not found',
    (path) => {
      expect(matchRoute('GET', path)).toEqual({ kind: 'not_found' });
    },
  );

  it('a known path with another method is method_not_allowed', () => {
    expect(matchRoute('DELETE', '/admin/stores/s1')).toEqual({ kind: 'method_not_allowed' });
  });

  it('does not let a parameter span path segments', () => {
    expect(matchRoute('PUT', '/admin/stores/a/b')).toEqual({ kind: 'not_found' });
  });
});

describe('ROUTES', () => {
  it('has unique ids', () => {
    expect(new Set(ROUTES.map((r) => r.id)).size).toBe(ROUTES.length);
  });

  it('has one route per method and resource', () => {
    expect(new Set(ROUTES.map((r) => `${r.method} ${r.resource}`)).size).toBe(ROUTES.length);
  });

  it.each(ROUTES.map((r) => [r.id, r] as const))(
    '%s is guarded by the credential its prefix calls for',
    (_id, r) => {
      expect([r.fn, r.auth]).toEqual(r.resource.startsWith('/v1/') ? ['ingest', 'tenant'] : ['admin', 'iam']);
    },
  );
});

describe('routeById', () => {
  it('throws for an unknown id', () => {
    expect(() => routeById('nope' as RouteId)).toThrow('unknown route nope');
  });
});
