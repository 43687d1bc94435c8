import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayTokenAuthorizerEvent } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { createAwsClients } from '../../../lambdas/adapters/aws-clients.js';
import {
  authorizeToken,
  createAuthorizerHandler,
  integratorRoutesArn,
  UNAUTHORIZED,
} from '../../../lambdas/app/authorizer-app.js';
import { loadConfig } from '../../../lambdas/config/runtime-config.js';
import type { TokenRecord, TokenStore } from '../../../lambdas/core/ports.js';
import { hashToken, tokenIdOf } from '../../../lambdas/core/tokens.js';
import { appOverrides, FULL_ENV, recordingTelemetry, T0, TABLES } from '../support/fixtures.js';

const ddb = mockClient(DynamoDBDocumentClient);
const TOKEN = 'aqt_0123456789abcdefghijklmnopqrstuvwxyzABCDEFG';
const METHOD_ARN = 'arn:aws:execute-api:us-east-1:123456789012:abcdef123/prod/POST/v1/stores/store-1/tasks';
const USAGE_KEY = 'k'.repeat(40);

const event = (authorizationToken: string): APIGatewayTokenAuthorizerEvent => ({
  type: 'TOKEN',
  authorizationToken,
  methodArn: METHOD_ARN,
});

const setup = () => {
  const { telemetry, logs } = recordingTelemetry();
  const handler = createAuthorizerHandler(loadConfig('authorizer', FULL_ENV), {
    clients: createAwsClients({ region: 'us-east-1' }),
    telemetry,
  });
  return { handler, logs };
};

beforeEach(() => {
  ddb.reset();
  ddb.on(GetCommand).resolves({});
  ddb.on(GetCommand, { Key: { tokenHash: hashToken(TOKEN) } }).resolves({
    Item: { tokenHash: hashToken(TOKEN), tenantId: 'tenant-1', createdAt: T0, usageKey: USAGE_KEY },
  });
});

describe('createAuthorizerHandler', () => {
  it('allows a known token to invoke the API', async () => {
    const { handler } = setup();
    const result = await handler(event(`Bearer ${TOKEN}`));
    expect(result.policyDocument.Statement).toEqual([
      expect.objectContaining({ Action: 'execute-api:Invoke', Effect: 'Allow' }),
    ]);
  });

  it('passes the tenant to the integration in the context', async () => {
    const { handler } = setup();
    const result = await handler(event(`Bearer ${TOKEN}`));
    expect({ principalId: result.principalId, context: result.context }).toEqual({
      principalId: 'tenant:tenant-1',
      context: { tenantId: 'tenant-1' },
    });
  });

  it("returns the tenant's usage key for API Gateway's usage plan (key source AUTHORIZER)", async () => {
    const { handler, logs } = setup();
    const result = await handler(event(`Bearer ${TOKEN}`));
    expect(result.usageIdentifierKey).toBe(USAGE_KEY);
    expect(logs).toEqual([]);
  });

  it('still allows a token issued before usage keys, without one, and warns with tenant and token id', async () => {
    ddb.on(GetCommand, { Key: { tokenHash: hashToken(TOKEN) } }).resolves({
      Item: { tokenHash: hashToken(TOKEN), tenantId: 'tenant-1', createdAt: T0 },
    });
    const { handler, logs } = setup();
    const result = await handler(event(`Bearer ${TOKEN}`));
    expect(result.policyDocument.Statement).toEqual([expect.objectContaining({ Effect: 'Allow' })]);
    expect('usageIdentifierKey' in result).toBe(false);
    expect(logs).toEqual([
      {
        level: 'warn',
        message:
          'integrator token has no usage key; backfill the tenant (POST /admin/tenants/{tenantId}/usage-key)',
        fields: { tenantId: 'tenant-1', tokenId: tokenIdOf(hashToken(TOKEN)) },
      },
    ]);
  });

  it('looks the token up by its SHA-256 hash, never the token itself', async () => {
    const { handler } = setup();
    await handler(event(`Bearer ${TOKEN}`));
    expect(ddb.commandCalls(GetCommand)[0]?.args[0].input).toEqual({
      TableName: TABLES.tokens,
      Key: { tokenHash: hashToken(TOKEN) },
    });
  });

  it('accepts the scheme in any case', async () => {
    const { handler } = setup();
    await expect(handler(event(`bearer ${TOKEN}`))).resolves.toMatchObject({
      principalId: 'tenant:tenant-1',
    });
  });

  it('refuses an unknown token with exactly "Unauthorized" (API Gateway’s 401)', async () => {
    const { handler } = setup();
    await expect(handler(event('Bearer aqt_unknown'))).rejects.toThrow(/^Unauthorized$/);
  });

  it('logs the refusal', async () => {
    const { handler, logs } = setup();
    await handler(event('Bearer aqt_unknown')).catch(() => undefined);
    expect(logs).toEqual([{ level: 'info', message: 'integrator token refused' }]);
  });

  it.each([
    ['no scheme', TOKEN],
    ['another scheme', `Basic ${TOKEN}`],
    ['an empty header', ''],
    ['two tokens', `Bearer ${TOKEN} ${TOKEN}`],
  ])('refuses %s without a lookup', async (_name, header) => {
    const { handler } = setup();
    await expect(handler(event(header))).rejects.toThrow(UNAUTHORIZED);
    expect(ddb.commandCalls(GetCommand)).toHaveLength(0);
  });

  it('lets a token-store failure through rather than refusing the caller', async () => {
    ddb.on(GetCommand).rejects(new Error('DynamoDB unavailable'));
    const { handler } = setup();
    await expect(handler(event(`Bearer ${TOKEN}`))).rejects.toThrow('DynamoDB unavailable');
  });
});

describe('createAuthorizerHandler with a restricted token', () => {
  it.each([
    ['revoked', { revokedAt: T0 }],
    ['past its rotation overlap', { expiresAt: T0 }],
  ])('refuses a token %s with "Unauthorized"', async (_label, restriction) => {
    ddb.on(GetCommand, { Key: { tokenHash: hashToken(TOKEN) } }).resolves({
      Item: { tokenHash: hashToken(TOKEN), tenantId: 'tenant-1', createdAt: T0, ...restriction },
    });
    const handler = createAuthorizerHandler(loadConfig('authorizer', FULL_ENV), appOverrides().overrides);
    await expect(handler(event(`Bearer ${TOKEN}`))).rejects.toThrow(UNAUTHORIZED);
  });
});

describe('authorizeToken', () => {
  const record = (extra: Partial<TokenRecord> = {}): TokenRecord => ({
    tokenHash: hashToken(TOKEN),
    tenantId: 't9',
    createdAt: T0,
    ...extra,
  });
  const storeWith = (found: TokenRecord): TokenStore => ({
    put: async () => undefined,
    get: async (hash) => (hash === found.tokenHash ? found : undefined),
    listByTenant: async () => [found],
    amend: async () => true,
    tenantsPage: async () => ({ tenantIds: [found.tenantId] }),
  });
  const tokens = storeWith(record());

  it.each([
    ['in a rotation overlap window', { expiresAt: T0 + 1 }, 't9'],
    ['expired at this instant', { expiresAt: T0 }, undefined],
    ['revoked', { revokedAt: T0 - 1 }, undefined],
    ['revoked while in an overlap window', { expiresAt: T0 + 60_000, revokedAt: T0 }, undefined],
  ])('for a token %s answers %s', async (_label, extra, expected) => {
    await expect(authorizeToken(storeWith(record(extra)), `Bearer ${TOKEN}`, T0)).resolves.toBe(expected);
  });

  it('answers the tenant of a known token', async () => {
    await expect(authorizeToken(tokens, `Bearer ${TOKEN}`)).resolves.toBe('t9');
  });

  it('answers undefined for an unknown token', async () => {
    await expect(authorizeToken(tokens, 'Bearer nope')).resolves.toBeUndefined();
  });

  it('answers undefined without a header', async () => {
    await expect(authorizeToken(tokens, undefined)).resolves.toBeUndefined();
  });
});

describe('integratorRoutesArn', () => {
  // API Gateway caches the decision per token across routes: the policy must not be tied to the called store.
  it('does not name the store the first call was for', () => {
    expect(integratorRoutesArn(METHOD_ARN)).not.toContain('store-1');
  });

  it('allows every method on the integrator routes of the same API and stage', () => {
    expect(integratorRoutesArn(METHOD_ARN)).toBe(
      'arn:aws:execute-api:us-east-1:123456789012:abcdef123/prod/*/v1/*',
    );
  });
});
