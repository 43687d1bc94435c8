import { z } from 'zod';
import { ConflictError, NotFoundError, ValidationError } from './errors.js';
import { json, parseJsonBody, tenantIdOf, validate, type HttpRequest, type HttpResponse } from './http.js';
import type { Clock, Telemetry, TenantUsageKeys, TokenRecord, TokenStore } from './ports.js';
import { hashToken, isUsable, newToken, TOKEN_ID_PATTERN, tokenIdOf, tokenStatus } from './tokens.js';

/**
 * Integrator credentials: create (shown once, stored as a hash), list (never the secret), revoke, and
 * rotate with an overlap window. The authorizer reads the same records (see authorizer-app.ts); API
 * Gateway caches its decision, so a revocation takes effect within AUTHORIZER_CACHE_SECONDS.
 */
export interface TenantTokenDeps {
  tokens: TokenStore;
  /** The tenant's throttle identity, stored on each token so all of a tenant's tokens share one bucket. */
  usageKeys: TenantUsageKeys;
  clock: Clock;
  telemetry: Telemetry;
}

/** Live (active or expiring) tokens one tenant may hold; bounds what one tenant's credentials can do in total. */
export const MAX_LIVE_TOKENS_PER_TENANT = 10;
/** Default and ceiling of a rotation's overlap window. */
export const DEFAULT_OVERLAP_SECONDS = 3600;
export const MAX_OVERLAP_SECONDS = 7 * 24 * 3600;

export const TokenId = z.string().regex(TOKEN_ID_PATTERN, 'must be 12 lowercase hex digits');
export const RotateBody = z.strictObject({
  overlapSeconds: z.number().int().min(0).max(MAX_OVERLAP_SECONDS).optional(),
});

const noBody = (request: HttpRequest): void => {
  const raw = request.body?.trim();
  if (raw !== undefined && raw !== '' && raw !== '{}')
    throw new ValidationError('body: this route takes no body');
};

const iso = (ms: number): string => new Date(ms).toISOString();

/** A token as the admin API shows it: never the token, never the full hash. */
export const tokenView = (record: TokenRecord, now: number) => ({
  tokenId: tokenIdOf(record.tokenHash),
  status: tokenStatus(record, now),
  createdAt: iso(record.createdAt),
  ...(record.expiresAt === undefined ? {} : { expiresAt: iso(record.expiresAt) }),
  ...(record.revokedAt === undefined ? {} : { revokedAt: iso(record.revokedAt) }),
});

/** The tenant's token `tokenId` among its records (one `listByTenant`, read by the caller). */
const findToken = (records: TokenRecord[], tenantId: string, tokenId: string): TokenRecord => {
  const record = records.find((r) => tokenIdOf(r.tokenHash) === tokenId);
  if (!record) throw new NotFoundError('token_not_found', `tenant ${tenantId} has no token ${tokenId}`);
  return record;
};

/** A new token for the tenant, whose current records (`listByTenant`) the caller has just read. */
const issue = async (deps: TenantTokenDeps, tenantId: string, records: TokenRecord[], now: number) => {
  const live = records.filter((r) => isUsable(tokenStatus(r, now)));
  if (live.length >= MAX_LIVE_TOKENS_PER_TENANT) {
    throw new ConflictError(
      'too_many_tokens',
      `tenant ${tenantId} already has ${live.length} live tokens; revoke one first`,
    );
  }
  // The throttle identity before the record: if it cannot be had, nothing is written and a retry is safe.
  const usageKey = await deps.usageKeys.ensure(tenantId);
  const token = newToken();
  const record: TokenRecord = { tokenHash: hashToken(token), tenantId, createdAt: now, usageKey };
  await deps.tokens.put(record);
  return { token, record };
};

export const createToken = async (deps: TenantTokenDeps, request: HttpRequest): Promise<HttpResponse> => {
  const tenantId = tenantIdOf(request);
  noBody(request);
  const records = await deps.tokens.listByTenant(tenantId);
  const { token, record } = await issue(deps, tenantId, records, deps.clock.now());
  const tokenId = tokenIdOf(record.tokenHash);
  deps.telemetry.info('tenant token created', { tenantId, tokenId, caller: request.caller });
  return json(201, { token, tokenId, tenantId });
};

export const listTokens = async (deps: TenantTokenDeps, request: HttpRequest): Promise<HttpResponse> => {
  const tenantId = tenantIdOf(request);
  const now = deps.clock.now();
  const records = await deps.tokens.listByTenant(tenantId);
  records.sort((a, b) => a.createdAt - b.createdAt || a.tokenHash.localeCompare(b.tokenHash));
  return json(200, { tenantId, tokens: records.map((r) => tokenView(r, now)) });
};

export const revokeToken = async (deps: TenantTokenDeps, request: HttpRequest): Promise<HttpResponse> => {
  const tenantId = tenantIdOf(request);
  const tokenId = validate(TokenId, request.pathParameters['tokenId'], ['tokenId']);
  noBody(request);
  const now = deps.clock.now();
  const record = findToken(await deps.tokens.listByTenant(tenantId), tenantId, tokenId);
  if (tokenStatus(record, now) === 'revoked') return json(200, tokenView(record, now)); // idempotent
  if (!(await deps.tokens.amend(record.tokenHash, { revokedAt: now }))) {
    throw new NotFoundError('token_not_found', `tenant ${tenantId} has no token ${tokenId}`);
  }
  deps.telemetry.info('tenant token revoked', { tenantId, tokenId, caller: request.caller });
  return json(200, tokenView({ ...record, revokedAt: now }, now));
};

export const rotateToken = async (deps: TenantTokenDeps, request: HttpRequest): Promise<HttpResponse> => {
  const tenantId = tenantIdOf(request);
  const tokenId = validate(TokenId, request.pathParameters['tokenId'], ['tokenId']);
  const raw = request.body?.trim();
  const body = raw === undefined || raw === '' ? {} : validate(RotateBody, parseJsonBody(request, 1024));
  const overlapSeconds = body.overlapSeconds ?? DEFAULT_OVERLAP_SECONDS;
  const now = deps.clock.now();
  // One read of the tenant's tokens serves both the lookup and the live-token cap.
  const records = await deps.tokens.listByTenant(tenantId);
  const old = findToken(records, tenantId, tokenId);
  if (!isUsable(tokenStatus(old, now))) {
    throw new ConflictError(
      'token_not_live',
      `token ${tokenId} is ${tokenStatus(old, now)} and cannot be rotated`,
    );
  }
  // The new token first: if the old one's expiry then fails to save, both still work and a retry is safe.
  const { token, record } = await issue(deps, tenantId, records, now);
  const expiresAt = Math.min(old.expiresAt ?? Number.POSITIVE_INFINITY, now + overlapSeconds * 1000);
  await deps.tokens.amend(old.tokenHash, { expiresAt });
  const newTokenId = tokenIdOf(record.tokenHash);
  deps.telemetry.info('tenant token rotated', {
    tenantId,
    tokenId: newTokenId,
    replaces: tokenId,
    overlapSeconds,
    caller: request.caller,
  });
  return json(201, {
    token,
    tokenId: newTokenId,
    tenantId,
    replaced: tokenView({ ...old, expiresAt }, now),
  });
};

/** Writes the tenant's usage key onto each of its token records that lacks it; how many it changed. */
const backfillTenant = async (deps: TenantTokenDeps, tenantId: string): Promise<number> => {
  const usageKey = await deps.usageKeys.ensure(tenantId);
  const stale = (await deps.tokens.listByTenant(tenantId)).filter((r) => r.usageKey !== usageKey);
  let updated = 0;
  for (const record of stale) if (await deps.tokens.amend(record.tokenHash, { usageKey })) updated++;
  return updated;
};

/**
 * `POST /admin/tenants/{tenantId}/usage-key`: gives the tenant its usage-plan key (creating it when
 * missing, adding it to the plan) and writes it onto every token record of the tenant that lacks it.
 * Tokens issued before per-tenant usage plans are refused by API Gateway (403) until then; this lets them
 * keep working without a rotation. Idempotent: a second call finds nothing to update.
 */
export const backfillUsageKey = async (
  deps: TenantTokenDeps,
  request: HttpRequest,
): Promise<HttpResponse> => {
  const tenantId = tenantIdOf(request);
  noBody(request);
  const tokensUpdated = await backfillTenant(deps, tenantId);
  deps.telemetry.info('tenant usage key backfilled', { tenantId, tokensUpdated, caller: request.caller });
  return json(200, { tenantId, tokensUpdated });
};

/** Token records scanned per page of the bulk backfill: API Gateway allows 5 CreateApiKey calls a second. */
export const BACKFILL_PAGE = 50;
export const BackfillQuery = z.strictObject({ cursor: z.string().min(1).max(2048).optional() });

/**
 * `POST /admin/usage-keys/backfill?cursor=`: the same for every tenant, one page of the token table at a
 * time — call again with the answer's `cursor` until it has none (right after deploying this version).
 */
export const backfillUsageKeys = async (
  deps: TenantTokenDeps,
  request: HttpRequest,
): Promise<HttpResponse> => {
  const { cursor } = validate(BackfillQuery, request.query ?? {}, ['query']);
  noBody(request);
  const page = await deps.tokens.tenantsPage(cursor, BACKFILL_PAGE);
  const tenants: { tenantId: string; tokensUpdated: number }[] = [];
  for (const tenantId of page.tenantIds)
    tenants.push({ tenantId, tokensUpdated: await backfillTenant(deps, tenantId) });
  deps.telemetry.info('usage keys backfilled', {
    tenants: tenants.length,
    tokensUpdated: tenants.reduce((n, t) => n + t.tokensUpdated, 0),
    caller: request.caller,
  });
  return json(200, { tenants, ...(page.cursor ? { cursor: page.cursor } : {}) });
};
