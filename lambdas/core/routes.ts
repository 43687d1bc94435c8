/**
 * The HTTP routes, shared by the CDK stack (API Gateway resources and methods), the Lambda routers
 * and local mode's HTTP server, so the three cannot drift.
 */
export type RouteFunction = 'ingest' | 'admin';
/** tenant: bearer token checked by the Lambda authorizer; iam: SigV4 on AWS, ADMIN_TOKEN in local mode. */
export type RouteAuth = 'tenant' | 'iam' | 'none';

export interface RouteSpec {
  readonly id: string;
  readonly method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** API Gateway resource path, with {param} placeholders. */
  readonly resource: string;
  readonly fn: RouteFunction;
  readonly auth: RouteAuth;
}

export const ROUTES = [
  { id: 'submitTask', method: 'POST', resource: '/v1/stores/{storeId}/tasks', fn: 'ingest', auth: 'tenant' },
  {
    id: 'submitBatch',
    method: 'POST',
    resource: '/v1/stores/{storeId}/tasks/batch',
    fn: 'ingest',
    auth: 'tenant',
  },
  {
    id: 'taskStatus',
    method: 'GET',
    resource: '/v1/stores/{storeId}/tasks/{eventId}',
    fn: 'ingest',
    auth: 'tenant',
  },
  { id: 'putStore', method: 'PUT', resource: '/admin/stores/{storeId}', fn: 'admin', auth: 'iam' },
  { id: 'getStore', method: 'GET', resource: '/admin/stores/{storeId}', fn: 'admin', auth: 'iam' },
  { id: 'patchStore', method: 'PATCH', resource: '/admin/stores/{storeId}', fn: 'admin', auth: 'iam' },
  {
    id: 'redriveDeadLetters',
    method: 'POST',
    resource: '/admin/stores/{storeId}/dead-letters/redrive',
    fn: 'admin',
    auth: 'iam',
  },
  {
    id: 'createToken',
    method: 'POST',
    resource: '/admin/tenants/{tenantId}/tokens',
    fn: 'admin',
    auth: 'iam',
  },
  {
    id: 'listTokens',
    method: 'GET',
    resource: '/admin/tenants/{tenantId}/tokens',
    fn: 'admin',
    auth: 'iam',
  },
  {
    id: 'revokeToken',
    method: 'POST',
    resource: '/admin/tenants/{tenantId}/tokens/{tokenId}/revoke',
    fn: 'admin',
    auth: 'iam',
  },
  {
    id: 'rotateToken',
    method: 'POST',
    resource: '/admin/tenants/{tenantId}/tokens/{tokenId}/rotate',
    fn: 'admin',
    auth: 'iam',
  },
  {
    // Puts the tenant's usage-plan key on tokens issued before per-tenant usage plans (issue #5).
    id: 'backfillUsageKey',
    method: 'POST',
    resource: '/admin/tenants/{tenantId}/usage-key',
    fn: 'admin',
    auth: 'iam',
  },
  {
    id: 'backfillUsageKeys',
    method: 'POST',
    resource: '/admin/usage-keys/backfill',
    fn: 'admin',
    auth: 'iam',
  },
  // Operator routes (issue #4): busy stores oldest first, the controlled discard, per-store measures.
  { id: 'listBacklog', method: 'GET', resource: '/admin/backlog', fn: 'admin', auth: 'iam' },
  {
    id: 'purgeStoreQueue',
    method: 'POST',
    resource: '/admin/stores/{storeId}/queue/purge',
    fn: 'admin',
    auth: 'iam',
  },
  {
    id: 'storeMeasures',
    method: 'GET',
    resource: '/admin/stores/{storeId}/measures',
    fn: 'admin',
    auth: 'iam',
  },
  // Campaign windows (contract, "Scheduling policy"): a plan or overrides between two instants.
  {
    id: 'putStoreCampaign',
    method: 'PUT',
    resource: '/admin/stores/{storeId}/campaigns/{campaignId}',
    fn: 'admin',
    auth: 'iam',
  },
  {
    id: 'listStoreCampaigns',
    method: 'GET',
    resource: '/admin/stores/{storeId}/campaigns',
    fn: 'admin',
    auth: 'iam',
  },
  {
    id: 'deleteStoreCampaign',
    method: 'DELETE',
    resource: '/admin/stores/{storeId}/campaigns/{campaignId}',
    fn: 'admin',
    auth: 'iam',
  },
  {
    id: 'putTenantCampaign',
    method: 'PUT',
    resource: '/admin/tenants/{tenantId}/campaigns/{campaignId}',
    fn: 'admin',
    auth: 'iam',
  },
  {
    id: 'listTenantCampaigns',
    method: 'GET',
    resource: '/admin/tenants/{tenantId}/campaigns',
    fn: 'admin',
    auth: 'iam',
  },
  {
    id: 'deleteTenantCampaign',
    method: 'DELETE',
    resource: '/admin/tenants/{tenantId}/campaigns/{campaignId}',
    fn: 'admin',
    auth: 'iam',
  },
] as const satisfies readonly RouteSpec[];

export type RouteId = (typeof ROUTES)[number]['id'];

const compile = (resource: string): RegExp =>
  new RegExp(`^${resource.replace(/\{(\w+)\}/g, (_m, name: string) => `(?<${name}>[^/]+)`)}$`);

const compiled = ROUTES.map((route) => ({ route, pattern: compile(route.resource) }));

export type RouteMatch =
  | { kind: 'match'; route: RouteSpec; pathParameters: Record<string, string> }
  | { kind: 'method_not_allowed' }
  | { kind: 'not_found' };

/** Matches a concrete path (local mode; API Gateway does this itself on AWS). */
export const matchRoute = (method: string, path: string): RouteMatch => {
  let pathMatched = false;
  for (const { route, pattern } of compiled) {
    const m = pattern.exec(path);
    if (!m) continue;
    pathMatched = true;
    if (route.method !== method) continue;
    const pathParameters: Record<string, string> = {};
    try {
      for (const [key, value] of Object.entries(m.groups ?? {}))
        pathParameters[key] = decodeURIComponent(value);
    } catch {
      return { kind: 'not_found' }; // malformed percent-encoding names no resource
    }
    return { kind: 'match', route, pathParameters };
  }
  return pathMatched ? { kind: 'method_not_allowed' } : { kind: 'not_found' };
};

export const routeById = (id: RouteId): RouteSpec => {
  const route = ROUTES.find((r) => r.id === id);
  if (!route) throw new Error(`unknown route ${id}`);
  return route;
};
