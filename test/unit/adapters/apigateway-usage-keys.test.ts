import {
  APIGatewayClient,
  ConflictException,
  CreateApiKeyCommand,
  CreateUsagePlanKeyCommand,
  GetApiKeysCommand,
  GetUsagePlansCommand,
  NotFoundException,
} from '@aws-sdk/client-api-gateway';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { ApiGatewayUsageKeys, newUsageKeyValue } from '../../../lambdas/adapters/apigateway-usage-keys.js';
import { DerivedUsageKeys } from '../../../lambdas/adapters/derived-usage-keys.js';
import { DEPLOYMENT_TAG_KEY, usageKeyName } from '../../../lambdas/core/names.js';

const apigw = mockClient(APIGatewayClient);
const NAME = usageKeyName('aq', 'tenant-1');
const VALUE = 'a'.repeat(40);
const NEW_VALUE = 'b'.repeat(40);
const PLAN_STAGE = { apiId: 'abc123', stage: 'prod' };

const keys = () =>
  new ApiGatewayUsageKeys(
    new APIGatewayClient({ region: 'us-east-1' }),
    'aq',
    'abc123:prod',
    () => NEW_VALUE,
  );

const apiKey = (id: string, extra: Record<string, unknown> = {}) => ({
  id,
  name: NAME,
  value: VALUE,
  enabled: true,
  createdDate: new Date('2026-01-01T00:00:00Z'),
  ...extra,
});

const conflict = () => new ConflictException({ message: 'already in the plan', $metadata: {} });

beforeEach(() => {
  apigw.reset();
  apigw.on(GetUsagePlansCommand).resolves({
    items: [
      { id: 'other-plan', apiStages: [{ apiId: 'abc123', stage: 'dev' }] },
      { id: 'plan-1', apiStages: [PLAN_STAGE] },
    ],
  });
  apigw.on(CreateUsagePlanKeyCommand).resolves({});
});

describe('ApiGatewayUsageKeys.ensure with the key already made', () => {
  beforeEach(() => {
    apigw.on(GetApiKeysCommand).resolves({ items: [apiKey('key-1')] });
  });

  it("answers the existing key's value without creating one", async () => {
    await expect(keys().ensure('tenant-1')).resolves.toBe(VALUE);
    expect(apigw.commandCalls(CreateApiKeyCommand)).toHaveLength(0);
  });

  it('looks the key up by its name, with values', async () => {
    await keys().ensure('tenant-1');
    expect(apigw.commandCalls(GetApiKeysCommand)[0]?.args[0].input).toEqual({
      nameQuery: NAME,
      includeValues: true,
      limit: 500,
      position: undefined,
    });
  });

  it('adds it to the plan bound to the configured stage (finishing a half-done earlier call)', async () => {
    await keys().ensure('tenant-1');
    expect(apigw.commandCalls(CreateUsagePlanKeyCommand).map((c) => c.args[0].input)).toEqual([
      { usagePlanId: 'plan-1', keyId: 'key-1', keyType: 'API_KEY' },
    ]);
  });

  it('reads ConflictException as "already in the plan"', async () => {
    apigw.on(CreateUsagePlanKeyCommand).rejects(conflict());
    await expect(keys().ensure('tenant-1')).resolves.toBe(VALUE);
  });

  it('finds the plan again when the one it remembered is gone (the stack replaced it), once', async () => {
    const usageKeys = keys();
    await usageKeys.ensure('tenant-1'); // remembers plan-1
    apigw.on(GetUsagePlansCommand).resolves({ items: [{ id: 'plan-2', apiStages: [PLAN_STAGE] }] });
    apigw
      .on(CreateUsagePlanKeyCommand, { usagePlanId: 'plan-1' })
      .rejects(new NotFoundException({ message: 'Invalid Usage Plan ID', $metadata: {} }));
    await expect(usageKeys.ensure('tenant-1')).resolves.toBe(VALUE);
    expect(apigw.commandCalls(CreateUsagePlanKeyCommand).map((c) => c.args[0].input.usagePlanId)).toEqual([
      'plan-1',
      'plan-1',
      'plan-2',
    ]);
  });

  it('lets a NotFoundException through when the plan found again refuses the key too', async () => {
    apigw
      .on(CreateUsagePlanKeyCommand)
      .rejects(new NotFoundException({ message: 'Invalid API Key identifier', $metadata: {} }));
    await expect(keys().ensure('tenant-1')).rejects.toBeInstanceOf(NotFoundException);
    expect(apigw.commandCalls(CreateUsagePlanKeyCommand)).toHaveLength(2);
  });

  it('lets any other error through', async () => {
    apigw
      .on(CreateUsagePlanKeyCommand)
      .rejects(Object.assign(new Error('rate exceeded'), { name: 'TooManyRequestsException' }));
    await expect(keys().ensure('tenant-1')).rejects.toThrow('rate exceeded');
    expect(apigw.commandCalls(CreateUsagePlanKeyCommand)).toHaveLength(1);
  });

  it('ignores keys whose name only starts with the wanted one (nameQuery is a prefix match)', async () => {
    apigw.on(GetApiKeysCommand).resolves({
      items: [apiKey('key-longer', { name: `${NAME}x`, value: 'c'.repeat(40) }), apiKey('key-1')],
    });
    await expect(keys().ensure('tenant-1')).resolves.toBe(VALUE);
  });

  it('adopts the oldest key when a race made two (every token then shares one bucket)', async () => {
    apigw.on(GetApiKeysCommand).resolves({
      items: [
        apiKey('key-new', { value: 'n'.repeat(40), createdDate: new Date('2026-01-02T00:00:00Z') }),
        apiKey('key-old', { value: 'o'.repeat(40), createdDate: new Date('2026-01-01T00:00:00Z') }),
      ],
    });
    await expect(keys().ensure('tenant-1')).resolves.toBe('o'.repeat(40));
  });

  it('follows the pages of the key listing', async () => {
    apigw
      .on(GetApiKeysCommand)
      .resolvesOnce({ items: [], position: 'next' })
      .resolves({ items: [apiKey('key-1')] });
    await expect(keys().ensure('tenant-1')).resolves.toBe(VALUE);
    expect(apigw.commandCalls(GetApiKeysCommand)[1]?.args[0].input).toMatchObject({ position: 'next' });
  });

  it('finds the plan once per container', async () => {
    const usageKeys = keys();
    await usageKeys.ensure('tenant-1');
    await usageKeys.ensure('tenant-1');
    expect(apigw.commandCalls(GetUsagePlansCommand)).toHaveLength(1);
  });
});

describe('ApiGatewayUsageKeys.ensure for a new tenant', () => {
  beforeEach(() => {
    // Nothing before the create; the created key afterwards.
    apigw
      .on(GetApiKeysCommand)
      .resolvesOnce({ items: [] })
      .resolves({ items: [apiKey('key-1', { value: NEW_VALUE })] });
    apigw.on(CreateApiKeyCommand).resolves({ id: 'key-1', name: NAME, value: NEW_VALUE, enabled: true });
  });

  it('creates an enabled key with a random value and the tenant name', async () => {
    await expect(keys().ensure('tenant-1')).resolves.toBe(NEW_VALUE);
    expect(apigw.commandCalls(CreateApiKeyCommand)[0]?.args[0].input).toEqual({
      name: NAME,
      enabled: true,
      value: NEW_VALUE,
      description: expect.stringContaining('tenant-1'),
      tags: expect.any(Object),
    });
  });

  it('tags the key with the deployment (its prefix) and the tenant, so teardown can find it', async () => {
    await keys().ensure('tenant-1');
    expect(apigw.commandCalls(CreateApiKeyCommand)[0]?.args[0].input.tags).toEqual({
      [DEPLOYMENT_TAG_KEY]: 'aq',
      tenantId: 'tenant-1',
    });
  });

  it('then adds it to the plan as an API_KEY', async () => {
    await keys().ensure('tenant-1');
    expect(apigw.commandCalls(CreateUsagePlanKeyCommand).map((c) => c.args[0].input)).toEqual([
      { usagePlanId: 'plan-1', keyId: 'key-1', keyType: 'API_KEY' },
    ]);
  });

  it('lets a failed create through and adds nothing to the plan', async () => {
    apigw.on(CreateApiKeyCommand).rejects(Object.assign(new Error('throttled'), { $metadata: {} }));
    await expect(keys().ensure('tenant-1')).rejects.toThrow('throttled');
    expect(apigw.commandCalls(CreateUsagePlanKeyCommand)).toHaveLength(0);
  });

  it('after a failed association, the retry finds the key by name and adds it without a second create', async () => {
    apigw.on(CreateUsagePlanKeyCommand).rejectsOnce(Object.assign(new Error('throttled'), { $metadata: {} }));
    const usageKeys = keys();
    await expect(usageKeys.ensure('tenant-1')).rejects.toThrow('throttled');
    await expect(usageKeys.ensure('tenant-1')).resolves.toBe(NEW_VALUE);
    expect(apigw.commandCalls(CreateApiKeyCommand)).toHaveLength(1);
    expect(apigw.commandCalls(CreateUsagePlanKeyCommand)).toHaveLength(2);
  });
});

describe('ApiGatewayUsageKeys usage plan lookup', () => {
  it.each([
    [
      'no plan is bound to the stage',
      [{ id: 'other-plan', apiStages: [{ apiId: 'abc123', stage: 'dev' }] }],
      0,
    ],
    [
      'two plans are bound to it',
      [
        { id: 'plan-1', apiStages: [PLAN_STAGE] },
        { id: 'plan-2', apiStages: [PLAN_STAGE] },
      ],
      2,
    ],
  ])('fails, creating nothing, when %s', async (_label, items, found) => {
    apigw.on(GetUsagePlansCommand).resolves({ items });
    await expect(keys().ensure('tenant-1')).rejects.toThrow(
      `expected exactly one usage plan on API stage abc123:prod, found ${found}`,
    );
    expect(apigw.commandCalls(CreateApiKeyCommand)).toHaveLength(0);
  });

  it('tries again on the next call after a failed lookup', async () => {
    apigw
      .on(GetUsagePlansCommand)
      .rejectsOnce(Object.assign(new Error('throttled'), { $metadata: {} }))
      .resolves({ items: [{ id: 'plan-1', apiStages: [PLAN_STAGE] }] });
    apigw.on(GetApiKeysCommand).resolves({ items: [apiKey('key-1')] });
    const usageKeys = keys();
    await expect(usageKeys.ensure('tenant-1')).rejects.toThrow('throttled');
    await expect(usageKeys.ensure('tenant-1')).resolves.toBe(VALUE);
  });

  it('follows the pages of the plan listing', async () => {
    apigw
      .on(GetUsagePlansCommand)
      .resolvesOnce({ items: [], position: 'p2' })
      .resolves({ items: [{ id: 'plan-1', apiStages: [PLAN_STAGE] }] });
    apigw.on(GetApiKeysCommand).resolves({ items: [apiKey('key-1')] });
    await keys().ensure('tenant-1');
    expect(apigw.commandCalls(CreateUsagePlanKeyCommand)[0]?.args[0].input.usagePlanId).toBe('plan-1');
  });
});

describe('usage key values', () => {
  it('are 40 random hex digits on AWS', () => {
    const a = newUsageKeyValue();
    expect(a).toMatch(/^[0-9a-f]{40}$/);
    expect(newUsageKeyValue()).not.toBe(a);
  });

  it('are derived per tenant and prefix in local mode, the same on every call', async () => {
    const local = new DerivedUsageKeys('aq');
    const value = await local.ensure('tenant-1');
    expect(value).toMatch(/^[0-9a-f]{40}$/);
    await expect(local.ensure('tenant-1')).resolves.toBe(value);
    await expect(local.ensure('tenant-2')).resolves.not.toBe(value);
    await expect(new DerivedUsageKeys('other').ensure('tenant-1')).resolves.not.toBe(value);
  });
});
