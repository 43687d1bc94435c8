import type { Context } from 'aws-lambda';
import { DynamoDeadLetterLedger } from '../adapters/dynamo-dead-letter-ledger.js';
import { DynamoStoreRegistry } from '../adapters/dynamo-store-registry.js';
import { DynamoDispatchState } from '../adapters/dynamo-dispatch-state.js';
import { SqsQueueAdmin } from '../adapters/sqs-queue-admin.js';
import { SqsTaskQueues } from '../adapters/sqs-task-queues.js';
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
    // The reconciler only reads queue counts and whether a redrive runs; the prefix is unused by those. Local
    // mode's emulator has no move tasks (ListMessageMoveTasks): its redrives are the in-process manual move.
    queues: new SqsQueueAdmin(clients.sqs, 'unused', overrides.redriveMode ?? 'move-task'),
    deadLetterLedger: new DynamoDeadLetterLedger(clients.doc, config[EnvNames.dispatchTable]),
    settings: {
      attentionGraceMs: config[EnvNames.attentionGraceSeconds] * 1000,
      sweepStoresPerRun: config[EnvNames.sweepStoresPerRun],
      // Stores activated before f267a90 into the active index (issue #10); after one full read, one read a run.
      backfillIndex: true,
      retention: {
        refreshAgeMs: config[EnvNames.refreshAgeSeconds] * 1000,
        copyDelaySeconds: config[EnvNames.refreshCopyDelaySeconds],
        batchesPerRun: config[EnvNames.refreshBatchesPerRun],
      },
    },
    // The retention pass (issue #10): it receives, re-sends and deletes store tasks; the bound is on the item.
    tasks: new SqsTaskQueues(clients.sqs),
    // Dead-letter keep (issue #10): the sweep re-sends a store DLQ's letters as fresh copies before SQS's 14 days.
    deadLetters: new SqsTaskQueues(clients.sqs),
    marks: new DynamoDispatchState(clients.doc, config[EnvNames.dispatchTable]),
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
