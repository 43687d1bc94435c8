import { createApiHandler } from '../adapters/api-gateway.js';
import { DynamoDeliveryLog } from '../adapters/dynamo-delivery-log.js';
import { CachedStoreRegistry, DynamoStoreRegistry } from '../adapters/dynamo-store-registry.js';
import { SqsTaskQueues } from '../adapters/sqs-task-queues.js';
import { EnvNames } from '../config/env-names.js';
import type { FunctionConfig } from '../config/runtime-config.js';
import { submitBatch, submitTask, taskStatus, type IngestDeps } from '../core/ingest.js';
import { composeSignalling, routeOn, type FlushableTelemetry, type RuntimeOverrides } from './runtime.js';

export const composeIngest = (
  config: FunctionConfig<'ingest'>,
  overrides: RuntimeOverrides = {},
): IngestDeps & { telemetry: FlushableTelemetry } => {
  const { clients, signal } = composeSignalling('ingest', config, overrides);
  const registry = new DynamoStoreRegistry(clients.doc, config[EnvNames.storesTable]);
  const cacheSeconds = config[EnvNames.storeCacheSeconds];
  return {
    ...signal,
    stores:
      cacheSeconds > 0
        ? new CachedStoreRegistry(registry, cacheSeconds * 1000, () => signal.clock.now())
        : registry,
    tasks: new SqsTaskQueues(clients.sqs),
    deliveries: new DynamoDeliveryLog(clients.doc, config[EnvNames.deliveriesTable]),
  };
};

/** The integrator routes: submit one task, submit a batch, read a task's status. */
export const createIngestHandler = (config: FunctionConfig<'ingest'>, overrides: RuntimeOverrides = {}) => {
  const deps = composeIngest(config, overrides);
  const route = routeOn(deps);
  return createApiHandler(
    {
      submitTask: route(submitTask),
      submitBatch: route(submitBatch),
      taskStatus: route(taskStatus),
    },
    deps.telemetry,
    () => deps.telemetry.flush?.(),
  );
};
