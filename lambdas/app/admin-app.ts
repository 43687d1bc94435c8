import { createApiHandler } from '../adapters/api-gateway.js';
import { DynamoStoreRegistry } from '../adapters/dynamo-store-registry.js';
import { DynamoTokenStore } from '../adapters/dynamo-token-store.js';
import { SqsQueueAdmin } from '../adapters/sqs-queue-admin.js';
import { EnvNames } from '../config/env-names.js';
import { FUNCTIONS } from '../config/topology.js';
import type { FunctionConfig } from '../config/runtime-config.js';
import {
  createToken,
  getStore,
  patchStore,
  putStore,
  redriveDeadLetters,
  type AdminDeps,
} from '../core/admin.js';
import {
  clientsFor,
  signalDepsFor,
  telemetryFor,
  type FlushableTelemetry,
  type RuntimeOverrides,
} from './runtime.js';

export const composeAdmin = (
  config: FunctionConfig<'admin'>,
  overrides: RuntimeOverrides = {},
): AdminDeps & { telemetry: FlushableTelemetry } => {
  const clients = clientsFor(config, overrides);
  const telemetry = telemetryFor(FUNCTIONS.admin.serviceName, overrides);
  return {
    ...signalDepsFor(config, clients, telemetry, overrides),
    stores: new DynamoStoreRegistry(clients.doc, config[EnvNames.storesTable]),
    queues: new SqsQueueAdmin(
      clients.sqs,
      config[EnvNames.queuePrefix],
      overrides.redriveMode ?? 'move-task',
    ),
    tokens: new DynamoTokenStore(clients.doc, config[EnvNames.tokensTable]),
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
    },
    deps.telemetry,
    () => deps.telemetry.flush?.(),
  );
};
