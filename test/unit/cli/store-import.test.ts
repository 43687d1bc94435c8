import { describe, expect, it } from 'vitest';
import type { ApiAnswer } from '../../../bin/aq/client.js';
import { CliError } from '../../../bin/aq/errors.js';
import type { JsonlLine } from '../../../bin/aq/jsonl.js';
import { ProgressBar } from '../../../bin/aq/progress.js';
import { importStores } from '../../../bin/aq/store-import.js';

const store = (i: number): JsonlLine => ({
  line: i + 1,
  value: { storeId: `s-${i}`, tenantId: 't', marketplace: 'ml', plan: 'basic' },
});

/** A fake API answering each PUT from `answers(storeId, attempt)`; records the calls. */
const fakeClient = (answers: (storeId: string, attempt: number) => ApiAnswer | Error) => {
  const calls: { path: string; body: unknown }[] = [];
  const attempts = new Map<string, number>();
  return {
    calls,
    request: async <T>(
      _method: string,
      path: string,
      _caller: string,
      body?: unknown,
    ): Promise<ApiAnswer<T>> => {
      calls.push({ path, body });
      const storeId = decodeURIComponent(path.split('/').pop() ?? '');
      const attempt = (attempts.get(storeId) ?? 0) + 1;
      attempts.set(storeId, attempt);
      const answer = answers(storeId, attempt);
      if (answer instanceof Error) throw answer;
      return answer as ApiAnswer<T>;
    },
  };
};
const noSleep = async () => undefined;

describe('stores import', () => {
  it('PUTs each store without its storeId in the body', async () => {
    const client = fakeClient(() => ({ status: 201, body: {} }));
    await importStores(client, [store(0)], { concurrency: 1, attempts: 1, sleep: noSleep });
    expect(client.calls).toEqual([
      { path: 'admin/stores/s-0', body: { tenantId: 't', marketplace: 'ml', plan: 'basic' } },
    ]);
  });

  it('counts created and updated stores', async () => {
    const client = fakeClient((id) => ({ status: id === 's-0' ? 201 : 200, body: {} }));
    const report = await importStores(client, [store(0), store(1), store(2)], {
      concurrency: 2,
      attempts: 1,
      sleep: noSleep,
    });
    expect({ created: report.created, updated: report.updated }).toEqual({ created: 1, updated: 2 });
  });

  it('never runs more requests at once than the concurrency', async () => {
    let inFlight = 0;
    let peak = 0;
    const client = {
      request: async <T>(): Promise<ApiAnswer<T>> => {
        peak = Math.max(peak, ++inFlight);
        await new Promise((r) => setImmediate(r));
        inFlight--;
        return { status: 201, body: {} as T };
      },
    };
    await importStores(
      client,
      Array.from({ length: 50 }, (_, i) => store(i)),
      { concurrency: 4, attempts: 1, sleep: noSleep },
    );
    expect(peak).toBe(4);
  });

  it('retries a 503 and succeeds', async () => {
    const client = fakeClient((_id, attempt) =>
      attempt < 3 ? { status: 503, body: {} } : { status: 201, body: {} },
    );
    const report = await importStores(client, [store(0)], { concurrency: 1, attempts: 3, sleep: noSleep });
    expect({ created: report.created, calls: client.calls.length }).toEqual({ created: 1, calls: 3 });
  });

  it('does not retry a 400', async () => {
    const client = fakeClient(() => ({
      status: 400,
      body: { error: { code: 'invalid_request', message: 'plan: bad' } },
    }));
    const report = await importStores(client, [store(0)], { concurrency: 1, attempts: 3, sleep: noSleep });
    expect(client.calls.length).toBe(1);
    expect(report.failed).toEqual([
      { line: 1, storeId: 's-0', status: 400, error: 'invalid_request: plan: bad' },
    ]);
  });

  it('reports a connection error after its attempts', async () => {
    const client = fakeClient(() => new CliError('cannot reach http://x'));
    const report = await importStores(client, [store(0)], { concurrency: 1, attempts: 2, sleep: noSleep });
    expect(report.failed).toEqual([{ line: 1, storeId: 's-0', error: 'cannot reach http://x' }]);
  });

  it('stops at once on a credential error', async () => {
    const client = fakeClient(() => new CliError('401 unauthorized: set ADMIN_TOKEN'));
    await expect(
      importStores(client, [store(0), store(1)], { concurrency: 1, attempts: 3, sleep: noSleep }),
    ).rejects.toThrow(/401/);
  });

  it('reports lines that are not JSON or have no storeId, in line order', async () => {
    const client = fakeClient(() => ({ status: 201, body: {} }));
    const report = await importStores(
      client,
      [{ line: 3, value: { plan: 'basic' } }, { line: 1, error: 'not valid JSON' }, store(1)],
      { concurrency: 1, attempts: 1, sleep: noSleep },
    );
    expect(report.failed.map((f) => f.line)).toEqual([1, 3]);
  });

  it('draws progress only on a terminal', async () => {
    let drawn = '';
    const client = fakeClient(() => ({ status: 201, body: {} }));
    const progress = new ProgressBar({ isTTY: false, write: (t: string) => (drawn += t) }, 1, 'stores');
    await importStores(client, [store(0)], { concurrency: 1, attempts: 1, sleep: noSleep, progress });
    expect(drawn).toBe('');
  });

  it('draws a bar on a terminal', async () => {
    let drawn = '';
    const client = fakeClient(() => ({ status: 201, body: {} }));
    const progress = new ProgressBar({ isTTY: true, write: (t: string) => (drawn += t) }, 1, 'stores');
    await importStores(client, [store(0)], { concurrency: 1, attempts: 1, sleep: noSleep, progress });
    expect(drawn).toContain('stores [##############################] 1/1');
  });
});
