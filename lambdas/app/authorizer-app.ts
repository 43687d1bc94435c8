import type { APIGatewayAuthorizerResult, APIGatewayTokenAuthorizerEvent, Context } from 'aws-lambda';
import { DynamoTokenStore } from '../adapters/dynamo-token-store.js';
import { systemClock } from '../adapters/system.js';
import { EnvNames } from '../config/env-names.js';
import type { FunctionConfig } from '../config/runtime-config.js';
import type { TokenRecord, TokenStore } from '../core/ports.js';
import { bearerToken, hashToken, isUsable, tokenIdOf, tokenStatus } from '../core/tokens.js';
import { clientsFor, telemetryFor, type RuntimeOverrides } from './runtime.js';

/** API Gateway turns this exact message into a 401 (the gateway response then carries the contract's JSON). */
export const UNAUTHORIZED = 'Unauthorized';

/**
 * The policy covers every integrator route of the stage, because API Gateway caches the decision per
 * token and reuses it across routes; ownership of the store is checked by the ingest function.
 */
export const integratorRoutesArn = (methodArn: string): string => {
  // arn:aws:execute-api:{region}:{account}:{apiId}/{stage}/{METHOD}/{path…}
  const [apiArn, stage] = methodArn.split('/') as [string, string?];
  return `${apiArn}/${stage ?? '*'}/*/v1/*`;
};

/** The record of a usable token (not revoked, not past a rotation's overlap window), else undefined. */
const usableTokenRecord = async (
  tokens: TokenStore,
  header: string | undefined,
  now: number = Date.now(),
): Promise<TokenRecord | undefined> => {
  const token = bearerToken(header);
  if (!token) return undefined;
  const record = await tokens.get(hashToken(token));
  return record && isUsable(tokenStatus(record, now)) ? record : undefined;
};

/** The tenant of a usable token, else undefined. */
export const authorizeToken = async (
  tokens: TokenStore,
  header: string | undefined,
  now: number = Date.now(),
): Promise<string | undefined> => (await usableTokenRecord(tokens, header, now))?.tenantId;

export const createAuthorizerHandler = (
  config: FunctionConfig<'authorizer'>,
  overrides: RuntimeOverrides = {},
) => {
  const clients = clientsFor(config, overrides);
  const telemetry = telemetryFor('authorizer', overrides);
  const tokens = new DynamoTokenStore(clients.doc, config[EnvNames.tokensTable]);
  const clock = overrides.clock ?? systemClock;
  return async (
    event: APIGatewayTokenAuthorizerEvent,
    context?: Context,
  ): Promise<APIGatewayAuthorizerResult> => {
    if (context) telemetry.bindInvocation?.(context);
    const record = await usableTokenRecord(tokens, event.authorizationToken, clock.now());
    if (!record) {
      telemetry.info('integrator token refused');
      throw new Error(UNAUTHORIZED);
    }
    const { tenantId, usageKey } = record;
    if (usageKey === undefined) {
      // Issued before per-tenant usage plans. Still an Allow (the token is valid), but without a usage key
      // API Gateway answers 403 on every integrator route (they require one) until an operator backfills
      // the tenant's key (POST /admin/tenants/{tenantId}/usage-key) or rotates the token.
      telemetry.warn(
        'integrator token has no usage key; backfill the tenant (POST /admin/tenants/{tenantId}/usage-key)',
        {
          tenantId,
          tokenId: tokenIdOf(record.tokenHash),
        },
      );
    }
    return {
      principalId: `tenant:${tenantId}`,
      policyDocument: {
        Version: '2012-10-17',
        Statement: [
          { Action: 'execute-api:Invoke', Effect: 'Allow', Resource: integratorRoutesArn(event.methodArn) },
        ],
      },
      context: { tenantId },
      // The tenant's throttle bucket: the API's key source is AUTHORIZER (see TenantUsagePlan).
      ...(usageKey === undefined ? {} : { usageIdentifierKey: usageKey }),
    };
  };
};
