import type { APIGatewayAuthorizerResult, APIGatewayTokenAuthorizerEvent } from 'aws-lambda';
import { DynamoTokenStore } from '../adapters/dynamo-token-store.js';
import { EnvNames } from '../config/env-names.js';
import { FUNCTIONS } from '../config/topology.js';
import type { FunctionConfig } from '../config/runtime-config.js';
import type { TokenStore } from '../core/ports.js';
import { bearerToken, hashToken, isUsable, tokenStatus } from '../core/tokens.js';
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

/** The tenant of a usable token (not revoked, not past a rotation's overlap window), else undefined. */
export const authorizeToken = async (
  tokens: TokenStore,
  header: string | undefined,
  now: number = Date.now(),
): Promise<string | undefined> => {
  const token = bearerToken(header);
  if (!token) return undefined;
  const record = await tokens.get(hashToken(token));
  return record && isUsable(tokenStatus(record, now)) ? record.tenantId : undefined;
};

export const createAuthorizerHandler = (
  config: FunctionConfig<'authorizer'>,
  overrides: RuntimeOverrides = {},
) => {
  const clients = clientsFor(config, overrides);
  const telemetry = telemetryFor(FUNCTIONS.authorizer.serviceName, overrides);
  const tokens = new DynamoTokenStore(clients.doc, config[EnvNames.tokensTable]);
  const clock = (): number => overrides.clock?.now() ?? Date.now();
  return async (event: APIGatewayTokenAuthorizerEvent): Promise<APIGatewayAuthorizerResult> => {
    const tenantId = await authorizeToken(tokens, event.authorizationToken, clock());
    if (!tenantId) {
      telemetry.info('integrator token refused');
      throw new Error(UNAUTHORIZED);
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
    };
  };
};
