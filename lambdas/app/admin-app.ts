import { createApiHandler } from '../adapters/api-gateway.js';
import { createApiGatewayClient } from '../adapters/aws-clients.js';
import { ApiGatewayUsageKeys } from '../adapters/apigateway-usage-keys.js';
import { DerivedUsageKeys } from '../adapters/derived-usage-keys.js';
import { DynamoActiveIndex } from '../adapters/dynamo-active-index.js';
import { DynamoCampaignBook } from '../adapters/dynamo-campaign-book.js';
import { DynamoStoreRegistry } from '../adapters/dynamo-store-registry.js';
import { DynamoTokenStore } from '../adapters/dynamo-token-store.js';
import { SqsQueueAdmin } from '../adapters/sqs-queue-admin.js';
import { EnvNames } from '../config/env-names.js';
import type { FunctionConfig } from '../config/runtime-config.js';
import { getStore, patchStore, putStore, redriveDeadLetters } from '../core/admin.js';
import { deleteCampaign, listCampaigns, putCampaign } from '../core/campaign-admin.js';
import type { CampaignBook } from '../core/campaigns.js';
import { listBacklog, purgeStoreQueue, storeMeasures, type OperationsDeps } from '../core/operations.js';
import type { TenantUsageKeys } from '../core/ports.js';
import {
  backfillUsageKey,
  backfillUsageKeys,
  createToken,
  listTokens,
  revokeToken,
  rotateToken,
} from '../core/tenant-tokens.js';
import { composeSignalling, routeOn, type FlushableTelemetry, type RuntimeOverrides } from './runtime.js';

/**
 * API Gateway API keys in the stage's usage plan when the stack names the stage (AWS), else keys derived
 * in process (local mode, where bin/local/api-server.ts throttles on them as the usage plan does).
 */
const usageKeysFor = (config: FunctionConfig<'admin'>, overrides: RuntimeOverrides): TenantUsageKeys => {
  if (overrides.usageKeys) return overrides.usageKeys;
  const apiStage = config[EnvNames.usagePlanStage];
  const prefix = config[EnvNames.queuePrefix];
  return apiStage === undefined
    ? new DerivedUsageKeys(prefix)
    : new ApiGatewayUsageKeys(createApiGatewayClient(config[EnvNames.region]), prefix, apiStage);
};

export const composeAdmin = (
  config: FunctionConfig<'admin'>,
  overrides: RuntimeOverrides = {},
): OperationsDeps & {
  telemetry: FlushableTelemetry;
  usageKeys: TenantUsageKeys;
  campaigns: CampaignBook;
} => {
  const { clients, signal } = composeSignalling('admin', config, overrides);
  return {
    ...signal,
    stores: new DynamoStoreRegistry(clients.doc, config[EnvNames.storesTable]),
    queues: new SqsQueueAdmin(
      clients.sqs,
      config[EnvNames.queuePrefix],
      overrides.redriveMode ?? 'move-task',
    ),
    tokens: new DynamoTokenStore(clients.doc, config[EnvNames.tokensTable]),
    usageKeys: usageKeysFor(config, overrides),
    activeIndex: new DynamoActiveIndex(clients.doc, config[EnvNames.dispatchTable]),
    // Uncached: an operator reads back what they wrote.
    campaigns: new DynamoCampaignBook(clients.doc, config[EnvNames.dispatchTable]),
  };
};

/** The operator routes: stores, dead-letter redrive, tenant tokens and usage keys, operations. */
export const createAdminHandler = (config: FunctionConfig<'admin'>, overrides: RuntimeOverrides = {}) => {
  const deps = composeAdmin(config, overrides);
  const route = routeOn(deps);
  return createApiHandler(
    {
      putStore: route(putStore),
      getStore: route(getStore),
      patchStore: route(patchStore),
      redriveDeadLetters: route(redriveDeadLetters),
      createToken: route(createToken),
      listTokens: route(listTokens),
      revokeToken: route(revokeToken),
      rotateToken: route(rotateToken),
      backfillUsageKey: route(backfillUsageKey),
      backfillUsageKeys: route(backfillUsageKeys),
      listBacklog: route(listBacklog),
      purgeStoreQueue: route(purgeStoreQueue),
      storeMeasures: route(storeMeasures),
      putStoreCampaign: route(putCampaign),
      listStoreCampaigns: route(listCampaigns),
      deleteStoreCampaign: route(deleteCampaign),
      putTenantCampaign: route(putCampaign),
      listTenantCampaigns: route(listCampaigns),
      deleteTenantCampaign: route(deleteCampaign),
    },
    deps.telemetry,
    () => deps.telemetry.flush?.(),
  );
};
