import type { Context } from 'aws-lambda';
import { DynamoDeadLetterLedger } from '../adapters/dynamo-dead-letter-ledger.js';
import { DynamoStoreRegistry } from '../adapters/dynamo-store-registry.js';
import { SqsQueueAdmin } from '../adapters/sqs-queue-admin.js';
import { EnvNames } from '../config/env-names.js';
import type { FunctionConfig } from '../config/runtime-config.js';
import { reconcile, type ReconcileReport, type ReconcilerDeps } from '../core/reconcile.js';
import { composeSignalling, type FlushableTelemetry, type RuntimeOverrides } from './runtime.js';

export const composeReconciler = (
  config: FunctionConfig<'reconciler'>,
  overrides: RuntimeOverrides = {},
): ReconcilerDeps & { telemetry: FlushableTelemetry } => {
  const { clients, signal } = composeSignalling('reconciler', config, overrides);
  return {
    ...signal,
    stores: new DynamoStoreRegistry(clients.doc, config[EnvNames.storesTable]),
    // The reconciler only reads queue counts; the prefix is unused by counts().
    queues: new SqsQueueAdmin(clients.sqs, 'unused'),
    deadLetterLedger: new DynamoDeadLetterLedger(clients.doc, config[EnvNames.dispatchTable]),
    settings: {
      attentionGraceMs: config[EnvNames.attentionGraceSeconds] * 1000,
      sweepStoresPerRun: config[EnvNames.sweepStoresPerRun],
    },
  };
};

/** Runs on the EventBridge schedule. */
export const createReconcilerHandler = (
  config: FunctionConfig<'reconciler'>,
  overrides: RuntimeOverrides = {},
) => {
  const deps = composeReconciler(config, overrides);
  return async (_event?: unknown, context?: Context): Promise<ReconcileReport> => {
    if (context) deps.telemetry.bindInvocation?.(context);
    try {
      const report = await reconcile(deps);
      deps.telemetry.info('reconciler run', { ...report });
      return report;
    } finally {
      deps.telemetry.flush?.();
    }
  };
};
