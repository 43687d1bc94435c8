import { randomBytes } from 'node:crypto';
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { createAwsClients, type AwsClients } from '../../lambdas/adapters/aws-clients.js';
import { DynamoStoreRegistry } from '../../lambdas/adapters/dynamo-store-registry.js';
import { RecordingTelemetry, type LogRecord } from '../../lambdas/adapters/recording-telemetry.js';
import { SqsQueueAdmin } from '../../lambdas/adapters/sqs-queue-admin.js';
import { composeAdmin, createAdminHandler } from '../../lambdas/app/admin-app.js';
import { createAuthorizerHandler } from '../../lambdas/app/authorizer-app.js';
import { createIngestHandler } from '../../lambdas/app/ingest-app.js';
import { createReconcilerHandler } from '../../lambdas/app/reconciler-app.js';
import type { RuntimeOverrides } from '../../lambdas/app/runtime.js';
import { createWorkerHandler } from '../../lambdas/app/worker-app.js';
import { EnvNames } from '../../lambdas/config/env-names.js';
import { loadConfig, type FunctionName } from '../../lambdas/config/runtime-config.js';
import { CONFIRM_EVENT_SOURCE, WORKER_EVENT_SOURCE } from '../../lambdas/config/topology.js';
import { NotFoundError } from '../../lambdas/core/errors.js';
import { MAX_RECEIVE_COUNT, STORE_PRIORITIES, type StorePriority } from '../../lambdas/core/plans.js';
import {
  DEFAULT_PRIORITY_SHARES,
  headroomWorkers,
  type PriorityShares,
} from '../../lambdas/core/priority-shares.js';
import type { ReconcileReport } from '../../lambdas/core/reconcile.js';
import { writeStore } from '../../lambdas/core/store-writes.js';
import { startApiServer, type ApiServerOptions } from './api-server.js';
import { startDynamoDbLocal, startFauxqs, type Emulator } from './emulators.js';
import { LocalMonitor } from './monitor.js';
import { startMarketplaceSim, type MarketplaceSim, type MarketplaceSimOptions } from './marketplace-sim.js';
import { provision, type LocalResources } from './provision.js';
import { BatchingEventSource } from './batching-event-source.js';
import { SqsEventSource, type EventSourceQueue } from './sqs-event-source.js';

/**
 * The whole system on one machine: emulators, the same tables and queues as the stack, the same
 * handlers behind a local API Gateway, a local SQS event source and a reconciler timer, and (unless
 * MARKETPLACE_BASE_URL is given) a simulated marketplace. `npm start` and the integration tests use it.
 */
export interface LocalStackOptions {
  prefix?: string;
  port?: number;
  adminToken?: string;
  marketplaceBaseUrl?: string;
  marketplaceSim?: MarketplaceSimOptions;
  /** Where DynamoDB Local keeps its tables; undefined keeps them in memory. */
  dataDir?: string;
  /** Reuse already running emulators instead of starting new ones. */
  endpoints?: { dynamo: string; sqs: string };
  workerPoolSize?: number;
  /** Attentions per worker invocation, run concurrently (default WORKER_EVENT_SOURCE.defaultBatchSize). */
  workerBatchSize?: number;
  /** Each store priority level's share of a saturated worker pool (default DEFAULT_PRIORITY_SHARES). */
  priorityShares?: PriorityShares;
  /** Percent of the pool kept for `high` stores while the lower levels saturate it (default 5; 0 keeps none). */
  highHeadroomPercent?: number;
  reconcileIntervalMs?: number;
  /** Runtime settings by env var name (e.g. AQ_ATTENTION_GRACE_SECONDS), as the stack would set them. */
  settings?: Partial<Record<string, string>>;
  log?: (record: LogRecord) => void;
  /** The least level `log` receives (default `warn`). */
  logLevel?: LogRecord['level'];
  /** Test hooks: replace the worker's marketplace, clock, … */
  workerOverrides?: RuntimeOverrides;
  /** The local API Gateway's authorizer cache TTL and per-tenant throttle (defaults: INTEGRATOR_API). */
  authorizerCacheSeconds?: ApiServerOptions['authorizerCacheSeconds'];
  tenantThrottle?: ApiServerOptions['tenantThrottle'];
}

export interface LocalStack {
  url: string;
  /** The handlers local mode wired, one per function of the topology. */
  handlers: Record<FunctionName, unknown>;
  adminToken: string;
  prefix: string;
  env: Record<string, string>;
  resources: LocalResources;
  clients: AwsClients;
  telemetry: RecordingTelemetry;
  /** GET /metrics and GET /dashboard: the local CloudWatch. */
  monitor: LocalMonitor;
  marketplace: MarketplaceSim | undefined;
  eventSource: SqsEventSource;
  /** The confirm queue's event source (batches of empty decisions). */
  confirmSource: BatchingEventSource;
  endpoints: { dynamo: string; sqs: string };
  reconcileNow(): Promise<ReconcileReport>;
  /** Pause/resume the attention workers (both event sources), e.g. to inspect the attention queue. */
  stopWorkers(): Promise<void>;
  startWorkers(): void;
  stop(): Promise<void>;
}

/**
 * The environment local mode gives the functions: what the stack sets on AWS (table names, the attention
 * queue URL, prefix, marketplace URL), plus the emulator endpoints. Each function parses only its part.
 */
const localEnvironment = (args: {
  prefix: string;
  resources: LocalResources;
  endpoints: { dynamo: string; sqs: string };
  marketplaceBaseUrl: string;
  settings: Partial<Record<string, string>>;
}): Record<string, string> => ({
  [EnvNames.region]: 'us-east-1',
  [EnvNames.queuePrefix]: args.prefix,
  [EnvNames.storesTable]: args.resources.tables.stores,
  [EnvNames.dispatchTable]: args.resources.tables.dispatch,
  [EnvNames.tokensTable]: args.resources.tables.tokens,
  [EnvNames.deliveriesTable]: args.resources.tables.deliveries,
  [EnvNames.attentionQueueUrl]: args.resources.attentionQueueUrls.normal,
  [EnvNames.attentionQueueUrlHigh]: args.resources.attentionQueueUrls.high,
  [EnvNames.attentionQueueUrlLow]: args.resources.attentionQueueUrls.low,
  [EnvNames.confirmQueueUrl]: args.resources.confirmQueueUrl,
  [EnvNames.marketplaceBaseUrl]: args.marketplaceBaseUrl,
  [EnvNames.sqsEndpoint]: args.endpoints.sqs,
  [EnvNames.dynamoEndpoint]: args.endpoints.dynamo,
  ...(Object.fromEntries(Object.entries(args.settings).filter(([, v]) => v !== undefined)) as Record<
    string,
    string
  >),
});

/** SQS messages live only in the emulator's memory: after a restart, recreate every known store's queues. */
const restoreStoreQueues = async (
  clients: AwsClients,
  resources: LocalResources,
  prefix: string,
): Promise<number> => {
  const registry = new DynamoStoreRegistry(clients.doc, resources.tables.stores);
  // 'manual': the emulator, which refuses RedriveAllowPolicy and has no move tasks.
  const queues = new SqsQueueAdmin(clients.sqs, prefix, 'manual');
  let restored = 0;
  let cursor: string | undefined;
  do {
    const page = await registry.scan(cursor, 100);
    for (const store of page.stores) {
      const urls = await queues.createStoreQueues(store.storeId, {
        maxReceiveCount: MAX_RECEIVE_COUNT,
        tags: { storeId: store.storeId, tenantId: store.tenantId },
      });
      if (
        urls.queueUrl !== store.queueUrl ||
        urls.deadLetterQueueUrl !== store.deadLetterQueueUrl ||
        urls.priorityQueueUrl !== store.priorityQueueUrl
      ) {
        // Only over the record as it is now; a store gone since the scan is not brought back.
        await writeStore(registry, store.storeId, async (current) => {
          if (current === undefined)
            throw new NotFoundError('store_not_found', `store ${store.storeId} is gone`);
          return { ...current, ...urls };
        }).catch((error: unknown) => {
          if (!(error instanceof NotFoundError)) throw error;
        });
      }
      restored++;
    }
    cursor = page.cursor;
  } while (cursor);
  return restored;
};

export const startLocalStack = async (options: LocalStackOptions = {}): Promise<LocalStack> => {
  const prefix = options.prefix ?? 'aq';
  const started: Emulator[] = [];
  const stops: (() => Promise<void>)[] = [];
  let ready = false;
  try {
    let endpoints = options.endpoints;
    if (!endpoints) {
      const [dynamo, sqs] = await Promise.all([
        startDynamoDbLocal(options.dataDir ? { dataDir: options.dataDir } : {}),
        startFauxqs(),
      ]);
      started.push(dynamo, sqs);
      endpoints = { dynamo: dynamo.endpoint, sqs: sqs.endpoint };
    }
    const clients = createAwsClients({
      region: 'us-east-1',
      sqsEndpoint: endpoints.sqs,
      dynamoEndpoint: endpoints.dynamo,
    });
    const resources = await provision(clients.dynamo, clients.sqs, prefix);
    await restoreStoreQueues(clients, resources, prefix);

    let marketplace: MarketplaceSim | undefined;
    let marketplaceBaseUrl = options.marketplaceBaseUrl;
    if (!marketplaceBaseUrl) {
      marketplace = await startMarketplaceSim(options.marketplaceSim ?? { latencyMs: 20 });
      stops.push(() => marketplace?.stop() ?? Promise.resolve());
      marketplaceBaseUrl = marketplace.url;
    }

    const env = localEnvironment({
      prefix,
      resources,
      endpoints,
      marketplaceBaseUrl,
      settings: options.settings ?? {},
    });
    const telemetry = new RecordingTelemetry(
      options.log ??
        ((r) =>
          process.stderr.write(`[${r.level}] ${r.message} ${r.fields ? JSON.stringify(r.fields) : ''}\n`)),
      options.logLevel,
    );
    const shared: RuntimeOverrides = { clients, telemetry, redriveMode: 'manual' };
    const adminConfig = loadConfig('admin', env);
    // The same composition roots the Lambda entry points call, each with the variables it would get on AWS.
    const handlers = {
      ingest: createIngestHandler(loadConfig('ingest', env), shared),
      admin: createAdminHandler(adminConfig, shared),
      authorizer: createAuthorizerHandler(loadConfig('authorizer', env), shared),
      worker: createWorkerHandler(loadConfig('worker', env), { ...shared, ...options.workerOverrides }),
      reconciler: createReconcilerHandler(loadConfig('reconciler', env), shared),
    } satisfies Record<FunctionName, unknown>;
    const { ingest, admin, authorizer, worker, reconciler } = handlers;

    const sourceQueue = async (url: string, name: string): Promise<EventSourceQueue> => {
      const attributes = await clients.sqs.send(
        new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn'] }),
      );
      return { url, arn: attributes.Attributes?.QueueArn ?? `arn:aws:sqs:us-east-1:000000000000:${name}` };
    };
    const levelQueue = async (level: StorePriority): Promise<[StorePriority, EventSourceQueue]> => [
      level,
      await sourceQueue(resources.attentionQueueUrls[level], `attention-${level}`),
    ];
    const eventSource = new SqsEventSource(clients.sqs, worker, {
      queues: Object.fromEntries(await Promise.all(STORE_PRIORITIES.map(levelQueue))) as Record<
        StorePriority,
        EventSourceQueue
      >,
      shares: options.priorityShares ?? DEFAULT_PRIORITY_SHARES,
      highHeadroom: headroomWorkers(options.workerPoolSize ?? 4, options.highHeadroomPercent),
      batchSize: options.workerBatchSize ?? WORKER_EVENT_SOURCE.defaultBatchSize,
      maxConcurrency: options.workerPoolSize ?? 4,
      onError: (error) => telemetry.error('attention event source error', { error: String(error) }),
    });
    // The confirm queue's event source (issue #11): batches of empty decisions, gathered over its window.
    const confirmSource = new BatchingEventSource(clients.sqs, worker, {
      queue: await sourceQueue(resources.confirmQueueUrl, 'attention-confirm'),
      batchSize: CONFIRM_EVENT_SOURCE.batchSize,
      windowMs: CONFIRM_EVENT_SOURCE.batchingWindowSeconds * 1000,
      maxConcurrency: CONFIRM_EVENT_SOURCE.maxConcurrency,
      onError: (error) => telemetry.error('confirm event source error', { error: String(error) }),
    });
    eventSource.start();
    confirmSource.start();
    stops.push(
      () => eventSource.stop(),
      () => confirmSource.stop(),
    );

    let reconciling: Promise<ReconcileReport> | undefined;
    const reconcileNow = (): Promise<ReconcileReport> => {
      reconciling ??= reconciler().finally(() => {
        reconciling = undefined;
      });
      return reconciling;
    };
    const timer = setInterval(() => {
      reconcileNow().catch((error: unknown) =>
        telemetry.error('reconciler run failed', { error: String(error) }),
      );
    }, options.reconcileIntervalMs ?? 60_000);
    stops.push(async () => {
      clearInterval(timer);
      await reconciling?.catch(() => undefined);
    });

    // Reads only (the operator listing + queue counts), with the admin function's adapters and clients.
    const monitor = new LocalMonitor(telemetry, composeAdmin(adminConfig, shared), clients.sqs, [
      ...Object.values(resources.attentionQueueUrls),
      resources.confirmQueueUrl,
    ]);
    stops.push(async () => monitor.stop());

    const adminToken = options.adminToken ?? randomBytes(24).toString('base64url');
    const api = await startApiServer({
      port: options.port ?? 0,
      adminToken,
      handlers: { ingest, admin },
      authorizer,
      isReady: () => ready,
      extra: (method, path) => monitor.route(method, path),
      authorizerCacheSeconds: options.authorizerCacheSeconds,
      tenantThrottle: options.tenantThrottle,
    });
    stops.unshift(() => api.stop());
    ready = true;

    const stop = async (): Promise<void> => {
      ready = false;
      for (const s of stops) await s().catch(() => undefined);
      await Promise.all(started.map((e) => e.stop()));
      clients.sqs.destroy();
      clients.dynamo.destroy();
    };
    return {
      url: api.url,
      handlers,
      adminToken,
      prefix,
      env,
      resources,
      clients,
      telemetry,
      monitor,
      marketplace,
      eventSource,
      confirmSource,
      endpoints,
      reconcileNow,
      stopWorkers: async () => {
        await Promise.all([eventSource.stop(), confirmSource.stop()]);
      },
      startWorkers: () => {
        eventSource.start();
        confirmSource.start();
      },
      stop,
    };
  } catch (error) {
    for (const s of stops) await s().catch(() => undefined);
    await Promise.all(started.map((e) => e.stop()));
    throw error;
  }
};
