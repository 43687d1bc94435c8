import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { ImportReport } from '../bin/aq/store-import.js';
import { startDynamoDbLocal, startFauxqs } from '../bin/local/emulators.js';
import { startLocalStack } from '../bin/local/local-stack.js';

/**
 * `npm run bench:import [-- --stores 10000 --concurrency 32]`: onboards N stores into local mode with the
 * real `aq stores import` (a separate process, as an operator runs it), then runs the same file again (the
 * safe re-run: every PUT an update). Writes bench/results/store-import.md. Measures, does not assert.
 */
const arg = (name: string, fallback: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
};
const stores = arg('stores', 10_000);
const concurrency = arg('concurrency', 32);
const log = (message: string) => process.stdout.write(`[bench:import] ${message}\n`);

const main = async (): Promise<void> => {
  const [dynamo, sqs] = await Promise.all([startDynamoDbLocal(), startFauxqs()]);
  const stack = await startLocalStack({
    port: 0,
    endpoints: { dynamo: dynamo.endpoint, sqs: sqs.endpoint },
    workerPoolSize: 1,
    log: () => undefined,
  });
  try {
    const dir = mkdtempSync(join(tmpdir(), 'aq-import-'));
    const file = join(dir, 'stores.jsonl');
    const plans = ['basic', 'pro', 'enterprise'];
    writeFileSync(
      file,
      Array.from({ length: stores }, (_, i) =>
        JSON.stringify({
          storeId: `bench-${i}`,
          tenantId: `tenant-${i % 500}`,
          marketplace: 'mercadolivre',
          plan: plans[i % 3],
        }),
      ).join('\n') + '\n',
    );
    const run = async (label: string): Promise<ImportReport> => {
      log(`${label}: ${stores} stores, concurrency ${concurrency}`);
      const { stdout } = await promisify(execFile)(
        process.execPath,
        ['bin/aq.mjs', '--json', 'stores', 'import', file, '--concurrency', String(concurrency)],
        {
          env: { ...process.env, AQ_ENDPOINT: stack.url, ADMIN_TOKEN: stack.adminToken },
          maxBuffer: 64 * 1024 * 1024,
        },
      );
      const report = JSON.parse(stdout) as ImportReport;
      log(
        `  ${report.storesPerSecond} stores/s (${report.seconds} s): ${report.created} created, ${report.updated} updated, ${report.failed.length} failed`,
      );
      return report;
    };
    const first = await run('first import');
    const again = await run('re-run of the same file');
    mkdirSync('bench/results', { recursive: true });
    writeFileSync(
      'bench/results/store-import.md',
      [
        '# `aq stores import` into local mode',
        '',
        `Measured ${new Date().toISOString().slice(0, 10)} with \`npm run bench:import\` on this machine (DynamoDB Local`,
        'and fauxqs; each new store is two SQS CreateQueue calls, a DynamoDB conditional put and a dispatch',
        'item). The CLI runs as its own process, as an operator would run it.',
        '',
        '| run | stores | concurrency | seconds | stores/s | created | updated | failed |',
        '|---|---|---|---|---|---|---|---|',
        ...[
          ['first import', first],
          ['re-run (safe: every PUT an update)', again],
        ].map(
          ([label, r]) =>
            `| ${label as string} | ${(r as ImportReport).total} | ${concurrency} | ${(r as ImportReport).seconds} | ${(r as ImportReport).storesPerSecond} | ${(r as ImportReport).created} | ${(r as ImportReport).updated} | ${(r as ImportReport).failed.length} |`,
        ),
        '',
      ].join('\n'),
    );
    log('wrote bench/results/store-import.md');
  } finally {
    await stack.stop();
    await Promise.all([dynamo.stop(), sqs.stop()]);
  }
};

await main();
