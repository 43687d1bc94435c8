import type { ApiClient } from './client.js';
import { CliError } from './errors.js';
import type { JsonlLine } from './jsonl.js';
import { runPool } from './pool.js';
import type { ProgressBar } from './progress.js';

export interface ImportFailure {
  line: number;
  storeId?: string;
  status?: number;
  error: string;
}

export interface ImportReport {
  total: number;
  created: number;
  updated: number;
  failed: ImportFailure[];
  seconds: number;
  storesPerSecond: number;
}

export interface ImportOptions {
  concurrency: number;
  /** Attempts per line for answers worth retrying (429, 503, connection errors). */
  attempts: number;
  progress?: ProgressBar;
  sleep?: (ms: number) => Promise<void>;
}

const RETRYABLE = new Set([429, 502, 503, 504]);

/**
 * PUT /admin/stores/{storeId} for each line (one store object with its storeId), a bounded number at a
 * time. PUT is idempotent (201 created, 200 updated), so re-running the same file is safe and only the
 * failed lines need attention; throttling and dependency failures are retried with backoff first.
 */
export const importStores = async (
  client: Pick<ApiClient, 'request'>,
  lines: readonly JsonlLine[],
  options: ImportOptions,
): Promise<ImportReport> => {
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const started = Date.now();
  const failed: ImportFailure[] = [];
  let created = 0;
  let updated = 0;
  let done = 0;
  const putOne = async (entry: JsonlLine): Promise<void> => {
    if ('error' in entry) return void failed.push({ line: entry.line, error: entry.error });
    const value = entry.value as Record<string, unknown> | null;
    const storeId = value?.['storeId'];
    if (typeof value !== 'object' || value === null || Array.isArray(value) || typeof storeId !== 'string') {
      return void failed.push({
        line: entry.line,
        error: 'a store object with a "storeId" string is required',
      });
    }
    const { storeId: _id, ...body } = value;
    const path = `admin/stores/${encodeURIComponent(storeId)}`;
    for (let attempt = 1; ; attempt++) {
      try {
        const answer = await client.request('PUT', path, 'admin', body);
        if (answer.status === 201) return void created++;
        if (answer.status === 200) return void updated++;
        if (!RETRYABLE.has(answer.status) || attempt >= options.attempts) {
          const error = (answer.body as { error?: { code?: string; message?: string } } | undefined)?.error;
          return void failed.push({
            line: entry.line,
            storeId,
            status: answer.status,
            error: error ? `${error.code ?? 'error'}: ${error.message ?? ''}` : `status ${answer.status}`,
          });
        }
      } catch (error) {
        // 401/403 will fail every line alike: stop at once rather than report 10,000 failures.
        if (error instanceof CliError && /^40[13] /.test(error.message)) throw error;
        if (attempt >= options.attempts)
          return void failed.push({ line: entry.line, storeId, error: (error as Error).message });
      }
      await sleep(100 * 2 ** attempt + Math.random() * 100);
    }
  };
  await runPool(lines, options.concurrency, async (entry) => {
    await putOne(entry);
    done++;
    options.progress?.update(done, failed.length);
  });
  options.progress?.finish(done, failed.length);
  failed.sort((a, b) => a.line - b.line);
  const seconds = (Date.now() - started) / 1000;
  return {
    total: lines.length,
    created,
    updated,
    failed,
    seconds: Math.round(seconds * 100) / 100,
    storesPerSecond: Math.round(lines.length / Math.max(seconds, 0.001)),
  };
};
