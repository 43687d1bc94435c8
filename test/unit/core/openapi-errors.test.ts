import { describe, expect, it } from 'vitest';
import { ROUTE_DOCS } from '../../../lambdas/core/openapi/route-docs.js';
import { ROUTES } from '../../../lambdas/core/routes.js';

/**
 * The error statuses each route documents are the ones its handler can answer, so a client generated from
 * the document handles them. Derived from what the handlers share rather than listed again route by route.
 */
const routes = ROUTES.map((r) => ({ ...r, errors: ROUTE_DOCS[r.id].errors }));

describe('documented error statuses', () => {
  it.each(routes.map((r) => [r.id, r] as const))(
    '%s: 400 (path and query are validated), 401 and 403 (authenticated), 503 (DynamoDB behind it)',
    (_id, r) => {
      expect(r.errors).toEqual(expect.arrayContaining([400, 401, 403, 503]));
    },
  );

  // parseJsonBody answers 413 over the route's limit and 415 for a content-type that is not JSON.
  it.each(routes.filter((r) => ROUTE_DOCS[r.id].body).map((r) => [r.id, r] as const))(
    '%s reads a JSON body: 413 and 415',
    (_id, r) => {
      expect(r.errors).toEqual(expect.arrayContaining([413, 415]));
    },
  );

  it.each(routes.filter((r) => !ROUTE_DOCS[r.id].body).map((r) => [r.id, r] as const))(
    '%s takes no body: no 413 or 415',
    (_id, r) => {
      expect(r.errors.filter((s) => s === 413 || s === 415)).toEqual([]);
    },
  );

  it('404 on every admin route of an existing store, token or campaign; never on the integrator routes', () => {
    const needsOne = (r: (typeof routes)[number]) =>
      (r.resource.startsWith('/admin/stores/{storeId}') && r.id !== 'putStore') ||
      r.resource.includes('{tokenId}') ||
      (r.resource.includes('{campaignId}') && r.method === 'DELETE');
    expect(routes.filter((r) => needsOne(r) !== r.errors.includes(404)).map((r) => r.id)).toEqual([]);
    // Ingest answers 403 for an unknown store and another tenant's alike: a 404 would tell which ids exist.
    expect(routes.filter((r) => r.fn === 'ingest' && r.errors.includes(404))).toEqual([]);
  });

  it('429 on the integrator routes (per-tenant throttling)', () => {
    expect(routes.filter((r) => (r.auth === 'tenant') !== r.errors.includes(429)).map((r) => r.id)).toEqual(
      [],
    );
  });
});
