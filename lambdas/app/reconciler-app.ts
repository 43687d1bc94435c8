import type { Context } from 'aws-lambda';
import { createLambdaClient } from '../adapters/aws-clients.js';
import { DynamoDeadLetterLedger } from '../adapters/dynamo-dead-letter-ledger.js';
import { LambdaLevelSources } from '../adapters/lambda-level-sources.js';
import { DynamoStoreRegistry } from '../adapters/dynamo-store-registry.js';
import { DynamoDispatchState } from '../adapters/dynamo-dispatch-state.js';
import { SqsQueueAdmin } from '../adapters/sqs-queue-admin.js';
import { SqsTaskQueues } from '../adapters/sqs-task-queues.js';
import { EnvNames } from '../config/env-names.js';
import type { FunctionConfig } from '../config/runtime-config.js';
import { balanceLevels, type LevelBalanceDeps, type LevelBalanceReport } from '../core/level-balance.js';
import { parseLevelCaps, parseLevelValues } from '../core/level-caps.js';
import { MetricNames } from '../core/names.js';
import { reconcile, type ReconcileReport, type ReconcilerDeps } from '../core/reconcile.js';
import {
  attentionQueueUrls,
  composeSignalling,
  type FlushableTelemetry,
  type RuntimeOverrides,
} from './runtime.js';

/**
 * Store priority on AWS: the levels' caps, when the stack set their floors and mappings (on AWS, loans on or
 * off). Local mode has no event sources: its pool's LevelPicker lends unused share itself.
 */
const composeLevelBalance = (
  config: FunctionConfig<'reconciler'>,
  signal: ReturnType<typeof composeSignalling>['signal'],
  clients: ReturnType<typeof composeSignalling>['clients'],
): LevelBalanceDeps | undefined => {
  const floors = config[EnvNames.levelFloors];
  const mappings = config[EnvNames.levelMappings];
  // Each level must have its own queue (the stack that sets the mappings makes all three).
  if (
    !floors ||
    !mappings ||
    !config[EnvNames.attentionQueueUrlHigh] ||
    !config[EnvNames.attentionQueueUrlLow]
  )
    return undefined;
  return {
    sources: new LambdaLevelSources(
      clients.sqs,
      createLambdaClient(config[EnvNames.region]),
      attentionQueueUrls(config),
      parseLevelValues(mappings, EnvNames.levelMappings),
    ),
    state: signal.dispatch,
    floors: parseLevelCaps(floors, EnvNames.levelFloors),
    loans: config[EnvNames.levelLoans] === 'on',
    clock: signal.clock,
    telemetry: signal.telemetry,
  };
};

export const composeReconciler = (
  config: FunctionConfig<'reconciler'>,
  overrides: RuntimeOverrides = {},
): ReconcilerDeps & { telemetry: FlushableTelemetry; levels?: LevelBalanceDeps } => {
  const { clients, signal } = composeSignalling('reconciler', config, overrides);
  const levels = composeLevelBalance(config, signal, clients);
  return {
    ...signal,
    ...(levels ? { levels } : {}),
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
  /** The levels' caps, beside the repairs: a failure here only leaves the loans as they were (floors hold). */
  const balance = async (): Promise<LevelBalanceReport | undefined> => {
    if (!deps.levels) return undefined;
    try {
      return await balanceLevels(deps.levels);
    } catch (error) {
      deps.telemetry.count(MetricNames.levelCapsFailures);
      deps.telemetry.warn('level caps not balanced', { error: String(error) });
      return undefined;
    }
  };
  return async (_event?: unknown, context?: Context): Promise<ReconcileReport> => {
    if (context) deps.telemetry.bindInvocation?.(context);
    try {
      // Both settle before the run returns or fails: a balance left running past its invocation would resume,
      // frozen, inside the next one and overlap that run's own (two raises spending the same room).
      const [repairs] = await Promise.allSettled([reconcile(deps), balance()]);
      if (repairs.status === 'rejected') throw repairs.reason;
      const report = repairs.value;
      deps.telemetry.info('reconciler run', { ...report });
      return report;
    } finally {
      deps.telemetry.flush?.();
    }
  };
};
