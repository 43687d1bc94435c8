import { createApiHandler } from '../adapters/api-gateway.js';
import { DynamoActiveIndex } from '../adapters/dynamo-active-index.js';
import { DynamoStoreRegistry } from '../adapters/dynamo-store-registry.js';
import { DynamoTokenStore } from '../adapters/dynamo-token-store.js';
import { SqsQueueAdmin } from '../adapters/sqs-queue-admin.js';
import { EnvNames } from '../config/env-names.js';
import type { FunctionConfig } from '../config/runtime-config.js';
import { getStore, patchStore, putStore, redriveDeadLetters } from '../core/admin.js';
import { listBacklog, purgeStoreQueue, storeMeasures, type OperationsDeps } from '../core/operations.js';
import { createToken, listTokens, revokeToken, rotateToken } from '../core/tenant-tokens.js';
import { composeSignalling, type FlushableTelemetry, type RuntimeOverrides } from './runtime.js';

export const composeAdmin = (
  config: FunctionConfig<'admin'>,
  overrides: RuntimeOverrides = {},
): OperationsDeps & { telemetry: FlushableTelemetry } => {
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
    activeIndex: new DynamoActiveIndex(clients.doc, config[EnvNames.dispatchTable]),
  };
};

/** The operator routes: stores, dead-letter redrive, tenant tokens. */
export const createAdminHandler = (config: FunctionConfig<'admin'>, overrides: RuntimeOverrides = {}) => {
  const deps = composeAdmin(config, overrides);
  return createApiHandler(
    {
      putStore: (request) => putStore(deps, request),
      getStore: (request) => getStore(deps, request),
      patchStore: (request) => patchStore(deps, request),
      redriveDeadLetters: (request) => redriveDeadLetters(deps, request),
      createToken: (request) => createToken(deps, request),
      listTokens: (request) => listTokens(deps, request),
      revokeToken: (request) => revokeToken(deps, request),
      rotateToken: (request) => rotateToken(deps, request),
      listBacklog: (request) => listBacklog(deps, request),
      purgeStoreQueue: (request) => purgeStoreQueue(deps, request),
      storeMeasures: (request) => storeMeasures(deps, request),
    },
    deps.telemetry,
    () => deps.telemetry.flush?.(),
  );
};
