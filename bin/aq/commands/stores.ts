import { Option, type Command } from 'commander';
import { parseJsonOption, print, table, type CliContext } from '../context.js';
import { CliError } from '../errors.js';
import { readJsonl } from '../jsonl.js';
import { ProgressBar } from '../progress.js';
import { importStores, type ImportReport } from '../store-import.js';

interface StoreView {
  storeId: string;
  tenantId: string;
  plan: string;
  status: string;
  queue?: { backlog: number; inFlight: number; deadLetters: number; oldestAgeSeconds: number };
}

const storePath = (storeId: string, rest = ''): string =>
  `admin/stores/${encodeURIComponent(storeId)}${rest}`;

const storeLine = (s: StoreView): string =>
  `${s.storeId}  tenant ${s.tenantId}  plan ${s.plan}  ${s.status}` +
  (s.queue
    ? `  backlog ${s.queue.backlog}  in flight ${s.queue.inFlight}  dead letters ${s.queue.deadLetters}`
    : '');

const importSummary = (r: ImportReport): string =>
  [
    `${r.total} stores in ${r.seconds} s (${r.storesPerSecond}/s): ${r.created} created, ${r.updated} updated, ${r.failed.length} failed`,
    ...r.failed.map((f) => `  line ${f.line}${f.storeId ? ` (${f.storeId})` : ''}: ${f.error}`),
  ].join('\n');

/** `field=value` of `stores set`: a number where it reads as one, null for `null`, else the text. */
const overridePair = (pair: string): [string, unknown] => {
  const at = pair.indexOf('=');
  if (at <= 0) throw new CliError(`expected field=value, got "${pair}"`);
  const field = pair.slice(0, at);
  const text = pair.slice(at + 1);
  if (text === 'null') return [field, null];
  return [field, text.trim() !== '' && Number.isFinite(Number(text)) ? Number(text) : text];
};

export const registerStores = (program: Command, ctx: () => CliContext): void => {
  const stores = program.command('stores').description('create, inspect, pause, drain and onboard stores');

  stores
    .command('put <storeId>')
    .description('create or update a store (PUT /admin/stores/{storeId})')
    .requiredOption('--tenant <tenantId>', 'owning tenant')
    .requiredOption('--marketplace <name>', 'marketplace, e.g. mercadolivre')
    .addOption(
      new Option('--plan <plan>', 'plan').choices(['basic', 'pro', 'enterprise']).makeOptionMandatory(),
    )
    .addOption(
      new Option('--status <status>', 'status').choices(['active', 'paused', 'maintenance', 'disabled']),
    )
    .option('--overrides <json>', 'policy overrides as JSON, e.g. \'{"ratePerSecond":10}\'')
    .action(
      async (
        storeId: string,
        o: { tenant: string; marketplace: string; plan: string; status?: string; overrides?: string },
      ) => {
        const c = ctx();
        const overrides = parseJsonOption('overrides', o.overrides);
        const body = {
          tenantId: o.tenant,
          marketplace: o.marketplace,
          plan: o.plan,
          ...(o.status ? { status: o.status } : {}),
          ...(overrides === undefined ? {} : { overrides }),
        };
        print(c, await (await c.client()).call('PUT', storePath(storeId), 'admin', body), storeLine);
      },
    );

  stores
    .command('get <storeId>')
    .description('a store: configuration, policy, queue counts (GET /admin/stores/{storeId})')
    .action(async (storeId: string) => {
      const c = ctx();
      print(c, await (await c.client()).call('GET', storePath(storeId), 'admin'));
    });

  stores
    .command('list')
    .description(
      'stores with work, oldest task first (every page of GET /admin/backlog; idle stores are not listed)',
    )
    .option('--limit <n>', 'stores per page (1–50)', '50')
    .action(async (o: { limit: string }) => {
      const c = ctx();
      const client = await c.client();
      const all: StoreView[] = [];
      let cursor: string | undefined;
      do {
        const query = `?limit=${encodeURIComponent(o.limit)}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
        const page = await client.call<{ stores: StoreView[]; cursor?: string }>(
          'GET',
          `admin/backlog${query}`,
          'admin',
        );
        all.push(...page.stores);
        cursor = page.cursor;
      } while (cursor);
      print(c, { stores: all }, (v: { stores: StoreView[] }) =>
        v.stores.length === 0
          ? 'no store has work'
          : table(
              ['STORE', 'TENANT', 'PLAN', 'STATUS', 'BACKLOG', 'OLDEST(s)'],
              v.stores.map((s) => [
                s.storeId,
                s.tenantId,
                s.plan,
                s.status,
                s.queue?.backlog ?? 0,
                s.queue?.oldestAgeSeconds ?? 0,
              ]),
            ),
      );
    });

  for (const [name, status, what] of [
    ['pause', 'paused', 'stop consuming a store (its tasks wait)'],
    ['resume', 'active', 'consume a store again (its backlog drains without a new task)'],
  ] as const) {
    stores
      .command(`${name} <storeId>`)
      .description(`${what} (PATCH /admin/stores/{storeId})`)
      .action(async (storeId: string) => {
        const c = ctx();
        print(c, await (await c.client()).call('PATCH', storePath(storeId), 'admin', { status }), storeLine);
      });
  }

  stores
    .command('set <storeId> <field=value...>')
    .description(
      "set policy overrides, keeping the store's others; `field=null` removes one, e.g. `throttleScope=task ratePerSecond=40` (PATCH setOverrides)",
    )
    .action(async (storeId: string, pairs: string[]) => {
      const c = ctx();
      const setOverrides = Object.fromEntries(pairs.map(overridePair));
      print(
        c,
        await (await c.client()).call('PATCH', storePath(storeId), 'admin', { setOverrides }),
        storeLine,
      );
    });

  stores
    .command('redrive <storeId>')
    .description("move the store's dead letters back to its queue")
    .action(async (storeId: string) => {
      const c = ctx();
      print(
        c,
        await (await c.client()).call('POST', storePath(storeId, '/dead-letters/redrive'), 'admin'),
        (r: { moving: number }) => `${storeId}: moving ${r.moving} dead letters back to the queue`,
      );
    });

  stores
    .command('purge <storeId>')
    .description("discard every task in the store's queue (not its DLQ); cannot be undone")
    .requiredOption('--confirm <storeId>', 'repeat the store id to confirm')
    .option('--reason <text>', 'why (logged with the purge)')
    .action(async (storeId: string, o: { confirm: string; reason?: string }) => {
      const c = ctx();
      const body = { confirm: o.confirm, ...(o.reason ? { reason: o.reason } : {}) };
      print(
        c,
        await (await c.client()).call('POST', storePath(storeId, '/queue/purge'), 'admin', body),
        (r: { discarded: number }) => `${storeId}: purged (${r.discarded} tasks discarded)`,
      );
    });

  stores
    .command('import <file>')
    .description(
      'create or update every store of a JSON Lines file (one PUT /admin/stores body with its storeId per line); safe to re-run',
    )
    .option('--concurrency <n>', 'requests at once', '16')
    .option('--attempts <n>', 'attempts per line on 429/503/connection errors', '4')
    .action(async (file: string, o: { concurrency: string; attempts: string }) => {
      const c = ctx();
      const concurrency = Number(o.concurrency);
      const attempts = Number(o.attempts);
      if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 256) {
        throw new CliError('--concurrency must be an integer from 1 to 256', 2);
      }
      if (!Number.isInteger(attempts) || attempts < 1)
        throw new CliError('--attempts must be a positive integer', 2);
      const lines = await readJsonl(file);
      const client = await c.client();
      const report = await importStores(client, lines, {
        concurrency,
        attempts,
        progress: new ProgressBar(c.stderr, lines.length, 'stores'),
      });
      print(c, report, importSummary);
      if (report.failed.length > 0) {
        throw new CliError(
          `${report.failed.length} of ${report.total} lines failed (listed above); fix them and run again`,
          1,
          report,
        );
      }
    });
};
