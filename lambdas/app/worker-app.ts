import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { CachedCampaignBook, DynamoCampaignBook } from '../adapters/dynamo-campaign-book.js';
import { DynamoDeadLetterLedger } from '../adapters/dynamo-dead-letter-ledger.js';
import { DynamoDeliveryLog } from '../adapters/dynamo-delivery-log.js';
import { DynamoStoreRegistry } from '../adapters/dynamo-store-registry.js';
import { HttpMarketplace } from '../adapters/http-marketplace.js';
import { SqsTaskQueues } from '../adapters/sqs-task-queues.js';
import { EnvNames } from '../config/env-names.js';
import type { FunctionConfig } from '../config/runtime-config.js';
import { handleAttention, type WorkerDeps } from '../core/attention.js';
import { CAMPAIGN_CACHE_MS, CampaignTransitions } from '../core/campaigns.js';
import { AttentionMessageSchema } from '../core/messages.js';
import { composeSignalling, type FlushableTelemetry, type RuntimeOverrides } from './runtime.js';

export const composeWorker = (
  config: FunctionConfig<'worker'>,
  overrides: RuntimeOverrides = {},
): WorkerDeps & { telemetry: FlushableTelemetry } => {
  const { clients, signal } = composeSignalling('worker', config, overrides);
  return {
    ...signal,
    stores: new DynamoStoreRegistry(clients.doc, config[EnvNames.storesTable]),
    campaigns: new CachedCampaignBook(
      new DynamoCampaignBook(clients.doc, config[EnvNames.dispatchTable]),
      CAMPAIGN_CACHE_MS,
      () => signal.clock.now(),
    ),
    campaignTransitions: new CampaignTransitions(),
    tasks: new SqsTaskQueues(clients.sqs),
    deliveries: new DynamoDeliveryLog(clients.doc, config[EnvNames.deliveriesTable]),
    deadLetterLedger: new DynamoDeadLetterLedger(clients.doc, config[EnvNames.dispatchTable]),
    marketplace:
      overrides.marketplace ??
      new HttpMarketplace(config[EnvNames.marketplaceBaseUrl], config[EnvNames.marketplaceTimeoutMs]),
    random: overrides.random ?? Math.random,
    settings: {
      emptyPollSeconds: config[EnvNames.emptyPollSeconds],
      confirmQueue: config[EnvNames.confirmQueueUrl] !== undefined,
      marketplaceTimeoutMs: config[EnvNames.marketplaceTimeoutMs],
      expiryAgeMs: config[EnvNames.expiryAgeSeconds] * 1000,
    },
  };
};

/**
 * The attention worker: an SQS event-source handler with partial batch responses. The records of one
 * invocation (up to WORKER_EVENT_SOURCE.defaultBatchSize attentions) run their slices concurrently, each
 * under its own lease: one worker holds several slices, and their end-of-slice long polls overlap (issue #11).
 * A record fails (and comes back after the visibility timeout) only when the store could not even be
 * looked at; everything after the lease is settled inside the slice.
 */
export const createWorkerHandler = (config: FunctionConfig<'worker'>, overrides: RuntimeOverrides = {}) => {
  const deps = composeWorker(config, overrides);
  const processor = new BatchProcessor(EventType.SQS);
  const handleRecord = async (record: SQSRecord): Promise<void> => {
    let body: unknown;
    try {
      body = JSON.parse(record.body);
    } catch {
      body = undefined;
    }
    const parsed = AttentionMessageSchema.safeParse(body);
    if (!parsed.success) {
      // Retrying cannot fix a malformed attention; dropping it is safe because the reconciler repairs stores.
      deps.telemetry.warn('malformed attention dropped', { messageId: record.messageId });
      return;
    }
    await handleAttention(deps, parsed.data);
  };
  return async (event: SQSEvent, context?: Context): Promise<SQSBatchResponse> => {
    if (context) deps.telemetry.bindInvocation?.(context);
    try {
      return await processPartialResponse(event, handleRecord, processor, {
        ...(context ? { context } : {}),
        throwOnFullBatchFailure: false,
        // Concurrently, not one after another: every slice then starts at the invocation's start, so each
        // lease ends before the Lambda timeout (timing.ts), whatever the batch holds.
        processInParallel: true,
      });
    } finally {
      deps.telemetry.flush?.();
    }
  };
};
