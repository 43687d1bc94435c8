import type { Command } from 'commander';
import { print, table, type CliContext } from '../context.js';
import { CliError } from '../errors.js';
import { readJsonl } from '../jsonl.js';
import { ProgressBar } from '../progress.js';

/** The integrator API's batch limit. */
const BATCH = 100;

interface BacklogStore {
  storeId: string;
  tenantId: string;
  status: string;
  queue: { backlog: number; inFlight: number; deadLetters: number; oldestAgeSeconds: number };
  busySeconds: number;
}

export const registerTasks = (program: Command, ctx: () => CliContext): void => {
  program
    .command('backlog')
    .description('one page of stores with work, oldest task first (GET /admin/backlog)')
    .option('--limit <n>', 'stores per page (1–50)', '20')
    .option('--cursor <cursor>', "the previous page's cursor")
    .action(async (o: { limit: string; cursor?: string }) => {
      const c = ctx();
      const query = `?limit=${encodeURIComponent(o.limit)}${o.cursor ? `&cursor=${encodeURIComponent(o.cursor)}` : ''}`;
      const page = await (
        await c.client()
      ).call<{ stores: BacklogStore[]; cursor?: string }>('GET', `admin/backlog${query}`, 'admin');
      print(c, page, (p: { stores: BacklogStore[]; cursor?: string }) =>
        [
          table(
            ['STORE', 'TENANT', 'STATUS', 'BACKLOG', 'IN FLIGHT', 'DLQ', 'OLDEST(s)', 'BUSY(s)'],
            p.stores.map((s) => [
              s.storeId,
              s.tenantId,
              s.status,
              s.queue.backlog,
              s.queue.inFlight,
              s.queue.deadLetters,
              s.queue.oldestAgeSeconds,
              s.busySeconds,
            ]),
          ),
          ...(p.cursor ? [`next page: aq backlog --cursor ${p.cursor}`] : []),
        ].join('\n'),
      );
    });

  program
    .command('task <storeId> <eventId>')
    .description("a task's delivery status (integrator API: AQ_TOKEN)")
    .action(async (storeId: string, eventId: string) => {
      const c = ctx();
      const path = `v1/stores/${encodeURIComponent(storeId)}/tasks/${encodeURIComponent(eventId)}`;
      print(
        c,
        await (await c.client()).call('GET', path, 'tenant'),
        (t: { status: string; attempts?: number; lastError?: string }) =>
          `${storeId}/${eventId}: ${t.status}${t.attempts === undefined ? '' : ` after ${t.attempts} attempts`}${t.lastError ? ` (${t.lastError})` : ''}`,
      );
    });

  program
    .command('send <storeId> <file>')
    .description('submit the tasks of a JSON Lines file, 100 per batch (integrator API: AQ_TOKEN)')
    .action(async (storeId: string, file: string) => {
      const c = ctx();
      const lines = await readJsonl(file);
      const bad = lines.filter((l) => 'error' in l).map((l) => l.line);
      if (bad.length > 0)
        throw new CliError(`lines ${bad.join(', ')} of ${file} are not JSON; nothing was sent`, 2);
      const tasks = lines.map((l) => ('value' in l ? l.value : undefined));
      const client = await c.client();
      const accepted: string[] = [];
      const rejected: { eventId: string; error: { code: string; message: string } }[] = [];
      const progress = new ProgressBar(c.stderr, tasks.length, 'tasks');
      for (let i = 0; i < tasks.length; i += BATCH) {
        const result = await client.call<{ accepted: string[]; rejected: typeof rejected }>(
          'POST',
          `v1/stores/${encodeURIComponent(storeId)}/tasks/batch`,
          'tenant',
          { tasks: tasks.slice(i, i + BATCH) },
        );
        accepted.push(...result.accepted);
        rejected.push(...result.rejected);
        progress.update(Math.min(i + BATCH, tasks.length), rejected.length);
      }
      progress.finish(tasks.length, rejected.length);
      print(c, { storeId, accepted, rejected }, () =>
        [
          `${accepted.length} accepted, ${rejected.length} rejected`,
          ...rejected.map((r) => `  ${r.eventId}: ${r.error.code}: ${r.error.message}`),
        ].join('\n'),
      );
      if (rejected.length > 0) throw new CliError(`${rejected.length} tasks were rejected`, 1);
    });
};
