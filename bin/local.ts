import { join } from 'node:path';
import { PrerequisiteError } from './local/emulators.js';
import { adminTokenWarning, loadLocalEnv } from './local/local-config.js';
import { startLocalStack, type LocalStack } from './local/local-stack.js';
import { MetricNames } from '../lambdas/core/names.js';

/** `npm start`: the whole system on this machine until Ctrl-C. */
const main = async (): Promise<void> => {
  const env = loadLocalEnv();
  process.stdout.write('Starting DynamoDB Local, the SQS emulator and the attention queue…\n');
  let stack: LocalStack;
  try {
    stack = await startLocalStack({
      port: env.PORT,
      ...(env.ADMIN_TOKEN ? { adminToken: env.ADMIN_TOKEN } : {}),
      ...(env.MARKETPLACE_BASE_URL ? { marketplaceBaseUrl: env.MARKETPLACE_BASE_URL } : {}),
      marketplaceSim: {
        latencyMs: env.SIM_MARKETPLACE_LATENCY_MS,
        errorRate: env.SIM_MARKETPLACE_ERROR_RATE,
        throttleRate: env.SIM_MARKETPLACE_THROTTLE_RATE,
        ...(env.SIM_MARKETPLACE_RATE_LIMIT === undefined
          ? {}
          : {
              limit: { perSecond: env.SIM_MARKETPLACE_RATE_LIMIT, headers: env.SIM_MARKETPLACE_RATE_HEADERS },
            }),
        maxRecorded: 1000,
      },
      dataDir: join(env.DATA_DIR, 'dynamodb'),
      workerPoolSize: env.AQ_WORKER_POOL_SIZE,
      workerBatchSize: env.AQ_WORKER_BATCH_SIZE,
      priorityShares: env.AQ_WORKER_POOL_SHARES,
      highHeadroomPercent: env.AQ_WORKER_POOL_HEADROOM,
      reconcileIntervalMs: env.AQ_RECONCILE_INTERVAL_SECONDS * 1000,
    });
  } catch (error) {
    if (error instanceof PrerequisiteError) {
      process.stderr.write(`\n${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
  const u = stack.url;
  process.stdout.write(
    [
      '',
      `Attention Queue running at ${u}  (GET ${u}/health)`,
      `Dashboard: ${u}/dashboard  (metrics as JSON: ${u}/metrics)`,
      `Admin token: ${stack.adminToken}${env.ADMIN_TOKEN ? ' (from ADMIN_TOKEN)' : ' (generated; set ADMIN_TOKEN to choose one)'}`,
      ...[adminTokenWarning(env.ADMIN_TOKEN, u)].filter((line) => line !== undefined),
      `Marketplace: ${env.MARKETPLACE_BASE_URL ?? `simulated at ${stack.marketplace?.url} (latency ${env.SIM_MARKETPLACE_LATENCY_MS} ms)`}`,
      `Data: ${env.DATA_DIR} (DynamoDB tables survive restarts; SQS messages do not)`,
      '',
      'Try:',
      `  curl -s -X PUT ${u}/admin/stores/store-1 -H "authorization: Bearer ${stack.adminToken}" -H 'content-type: application/json' -d '{"tenantId":"acme","marketplace":"mercadolivre","plan":"basic"}'`,
      `  TOKEN=$(curl -s -X POST ${u}/admin/tenants/acme/tokens -H "authorization: Bearer ${stack.adminToken}" | sed 's/.*"token":"\\([^"]*\\)".*/\\1/')`,
      `  curl -s -X POST ${u}/v1/stores/store-1/tasks -H "authorization: Bearer $TOKEN" -H 'content-type: application/json' -d '{"eventId":"e-1","type":"inventory.update","payload":{"sku":"SKU-1","quantity":3}}'`,
      '',
      'Ctrl-C stops everything.',
      '',
    ].join('\n'),
  );
  // One status line: rewritten in place on a terminal; otherwise one line every 30 s, only when it changed.
  const statusLine = (): string => {
    const t = stack.telemetry;
    const stores = stack.monitor.latestStores();
    const active = stores ? `${stores.active}${stores.activeCapped ? '+' : ''}` : '…';
    const backlog = stores ? stores.backlog.toLocaleString('en-US') : '…';
    const rate = stack.monitor.ratePerSecond(MetricNames.tasksDelivered).toFixed(1);
    return [
      `active stores ${active}`,
      `backlog ${backlog}`,
      `${rate} deliveries/s`,
      `dead letters ${t.total(MetricNames.tasksDeadLettered)}`,
      `accepted ${t.total(MetricNames.tasksAccepted)}`,
      `dashboard ${u}/dashboard`,
    ].join(' · ');
  };
  let lastPrinted = { line: '', at: 0 };
  const status = setInterval(() => {
    const line = statusLine();
    if (process.stdout.isTTY) {
      process.stdout.write(`\r\x1b[K${line.slice(0, Math.max(20, (process.stdout.columns ?? 120) - 1))}`);
    } else if (Date.now() - lastPrinted.at >= 30_000 && line !== lastPrinted.line) {
      process.stdout.write(`${line}\n`);
      lastPrinted = { line, at: Date.now() };
    }
  }, 1000);
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    clearInterval(status);
    process.stdout.write(`\n${signal}: stopping…\n`);
    stack
      .stop()
      .then(() => process.exit(0))
      .catch((error: unknown) => {
        process.stderr.write(`shutdown failed: ${String(error)}\n`);
        process.exit(1);
      });
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
};

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
