import { APIGatewayClient } from '@aws-sdk/client-api-gateway';
import { createApiHandler } from '../adapters/api-gateway.js';
import { ApiGatewayUsageKeys } from '../adapters/apigateway-usage-keys.js';
import { DerivedUsageKeys } from '../adapters/derived-usage-keys.js';
import { DynamoActiveIndex } from '../adapters/dynamo-active-index.js';
import { DynamoStoreRegistry } from '../adapters/dynamo-store-registry.js';
import { DynamoTokenStore } from '../adapters/dynamo-token-store.js';
import { SqsQueueAdmin } from '../adapters/sqs-queue-admin.js';
import { EnvNames } from '../config/env-names.js';
import type { FunctionConfig } from '../config/runtime-config.js';
import { getStore, patchStore, putStore, redriveDeadLetters } from '../core/admin.js';
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
import { composeSignalling, type FlushableTelemetry, type RuntimeOverrides } from './runtime.js';

/**
 * API Gateway API keys in the stage's usage plan when the stack names the stage (AWS), else keys derived
 * in process (local mode, where bin/local/api-server.ts throttles on them as the usage plan does).
 */
export const usageKeysFor = (
  config: FunctionConfig<'admin'>,
  overrides: RuntimeOverrides,
): TenantUsageKeys => {
  if (overrides.usageKeys) return overrides.usageKeys;
  const apiStage = config[EnvNames.usagePlanStage];
  const prefix = config[EnvNames.queuePrefix];
  return apiStage === undefined
    ? new DerivedUsageKeys(prefix)
    : new ApiGatewayUsageKeys(new APIGatewayClient({ region: config[EnvNames.region] }), prefix, apiStage);
};

export const composeAdmin = (
  config: FunctionConfig<'admin'>,
  overrides: RuntimeOverrides = {},
): OperationsDeps & { telemetry: FlushableTelemetry; usageKeys: TenantUsageKeys } => {
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
  };
};

/** The operator routes: stores, dead-letter redrive, tenant tokens. */
export const createAdminHandler = (config: FunctionConfig<'admin'>, overrides: RuntimeOverrides = {}) => {
  const deps = composeAdmin(config, overrides);
  return createApiHandler(
    {
      putStore: (request, telemetry) => putStore({ ...deps, telemetry }, request),
      getStore: (request, telemetry) => getStore({ ...deps, telemetry }, request),
      patchStore: (request, telemetry) => patchStore({ ...deps, telemetry }, request),
      redriveDeadLetters: (request, telemetry) => redriveDeadLetters({ ...deps, telemetry }, request),
      createToken: (request, telemetry) => createToken({ ...deps, telemetry }, request),
      listTokens: (request, telemetry) => listTokens({ ...deps, telemetry }, request),
      revokeToken: (request, telemetry) => revokeToken({ ...deps, telemetry }, request),
      rotateToken: (request, telemetry) => rotateToken({ ...deps, telemetry }, request),
      backfillUsageKey: (request, telemetry) => backfillUsageKey({ ...deps, telemetry }, request),
      backfillUsageKeys: (request, telemetry) => backfillUsageKeys({ ...deps, telemetry }, request),
      listBacklog: (request, telemetry) => listBacklog({ ...deps, telemetry }, request),
      purgeStoreQueue: (request, telemetry) => purgeStoreQueue({ ...deps, telemetry }, request),
      storeMeasures: (request, telemetry) => storeMeasures({ ...deps, telemetry }, request),
    },
    deps.telemetry,
    () => deps.telemetry.flush?.(),
  );
};
