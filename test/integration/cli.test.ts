import { execFile } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../bin/aq/program.js';
import { startTestStack, type TestStack } from '../support/harness.js';

/** Every `aq` command against local mode, in-process (and once through the package's bin). */
let stack: TestStack;
let dir: string;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  // Paused stores keep their backlog, so the listing commands have something to show.
  stack = await startTestStack({ workerPoolSize: 1 });
  dir = await mkdtemp(join(tmpdir(), 'aq-cli-'));
  env = { AQ_ENDPOINT: stack.stack.url, ADMIN_TOKEN: stack.stack.adminToken };
});
afterAll(async () => {
  await stack?.stop();
});

const aq = async (args: string[], extraEnv: NodeJS.ProcessEnv = {}) => {
  let stdout = '';
  let stderr = '';
  const code = await runCli(args, {
    stdout: (t) => (stdout += t),
    stderr: { write: (t: string) => (stderr += t) },
    env: { ...env, ...extraEnv },
  });
  return { code, stdout, stderr, json: () => JSON.parse(stdout) as Record<string, unknown> };
};

const jsonl = async (name: string, lines: (string | object)[]): Promise<string> => {
  const file = join(dir, name);
  await writeFile(file, lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n') + '\n');
  return file;
};

const STORE = 'cli-store-1';
const task = (eventId: string, quantity = 1) => ({
  eventId,
  type: 'inventory.update',
  payload: { sku: 'SKU-1', quantity },
});
let token = '';
let tokenId = '';

describe('aq against local mode', () => {
  it('stores put creates a store', async () => {
    const r = await aq([
      '--json',
      'stores',
      'put',
      STORE,
      '--tenant',
      'cli',
      '--marketplace',
      'ml',
      '--plan',
      'pro',
    ]);
    expect({ code: r.code, storeId: r.json()['storeId'] }).toEqual({ code: 0, storeId: STORE });
  });

  it('stores get shows it', async () => {
    const r = await aq(['--json', 'stores', 'get', STORE]);
    expect(r.json()).toMatchObject({ storeId: STORE, tenantId: 'cli', plan: 'pro', status: 'active' });
  });

  it('stores get of an unknown store fails with the API error', async () => {
    const r = await aq(['stores', 'get', 'cli-nope']);
    expect({ code: r.code, stderr: r.stderr }).toEqual({
      code: 1,
      stderr: expect.stringContaining('404 store_not_found'),
    });
  });

  it('tokens create issues a token', async () => {
    const r = await aq(['--json', 'tokens', 'create', 'cli']);
    ({ token, tokenId } = r.json() as { token: string; tokenId: string });
    expect(token).toMatch(/^aqt_/);
  });

  it('tokens list shows it', async () => {
    const r = await aq(['--json', 'tokens', 'list', 'cli']);
    expect(r.json()['tokens']).toEqual([expect.objectContaining({ tokenId, status: 'active' })]);
  });

  it("stores set changes one override at a time and keeps the store's others", async () => {
    await aq(['--json', 'stores', 'set', STORE, 'ratePerSecond=40']);
    const r = await aq(['--json', 'stores', 'set', STORE, 'throttleScope=task']);
    expect({ code: r.code, policy: r.json()['policy'] }).toMatchObject({
      code: 0,
      policy: { ratePerSecond: 40, throttleScope: 'task', maxConcurrentConsumers: 3 },
    });
    const back = await aq(['--json', 'stores', 'set', STORE, 'throttleScope=null', 'ratePerSecond=null']);
    expect(back.json()['policy']).toMatchObject({ ratePerSecond: 20, throttleScope: 'store' });
  });

  it('stores pause pauses the store', async () => {
    const r = await aq(['--json', 'stores', 'pause', STORE]);
    expect(r.json()['status']).toBe('paused');
  });

  it('send submits a JSON Lines file in batches', async () => {
    const file = await jsonl(
      'tasks.jsonl',
      Array.from({ length: 150 }, (_, i) => task(`cli-${i}`)),
    );
    const r = await aq(['--json', 'send', STORE, file], { AQ_TOKEN: token });
    expect((r.json()['accepted'] as string[]).length).toBe(150);
  });

  it('send exits non-zero and lists the rejected tasks', async () => {
    const file = await jsonl('bad-tasks.jsonl', [task('ok-1'), task('bad-1', -1)]);
    const r = await aq(['send', STORE, file], { AQ_TOKEN: token });
    expect({ code: r.code, stdout: r.stdout }).toEqual({
      code: 1,
      stdout: expect.stringContaining('bad-1: invalid_request'),
    });
  });

  it('task shows a task status', async () => {
    const r = await aq(['--json', 'task', STORE, 'cli-0'], { AQ_TOKEN: token });
    expect(r.json()).toMatchObject({ storeId: STORE, eventId: 'cli-0', status: 'pending' });
  });

  it('task without AQ_TOKEN says what to set', async () => {
    const r = await aq(['task', STORE, 'cli-0']);
    expect(r.stderr).toContain('set AQ_TOKEN');
  });

  it('backlog lists the paused store with work', async () => {
    const r = await aq(['--json', 'backlog']);
    expect((r.json()['stores'] as { storeId: string }[]).map((s) => s.storeId)).toContain(STORE);
  });

  it('stores list lists it too', async () => {
    const r = await aq(['stores', 'list', '--limit', '1']);
    expect(r.stdout).toContain(STORE);
  });

  it('stores purge discards its queue', async () => {
    const r = await aq(['--json', 'stores', 'purge', STORE, '--confirm', STORE, '--reason', 'cli test']);
    expect(r.json()).toMatchObject({ storeId: STORE, status: 'purged' });
  });

  it('stores resume resumes it', async () => {
    const r = await aq(['--json', 'stores', 'resume', STORE]);
    expect(r.json()['status']).toBe('active');
  });

  it('stores redrive starts moving its dead letters', async () => {
    const r = await aq(['--json', 'stores', 'redrive', STORE]);
    expect(r.json()).toMatchObject({ storeId: STORE, moving: expect.any(Number) });
  });

  it('tokens rotate issues a replacement', async () => {
    const r = await aq(['--json', 'tokens', 'rotate', 'cli', tokenId, '--overlap', '60']);
    expect(r.json()).toMatchObject({ tenantId: 'cli', replaced: { tokenId, status: 'expiring' } });
  });

  it('tokens revoke revokes the old one', async () => {
    const r = await aq(['--json', 'tokens', 'revoke', 'cli', tokenId]);
    expect(r.json()).toMatchObject({ tokenId, status: 'revoked' });
  });

  describe('stores import', () => {
    let file = '';
    beforeAll(async () => {
      const good = Array.from({ length: 10 }, (_, i) => ({
        storeId: `cli-imp-${i}`,
        tenantId: 'cli-imp',
        marketplace: 'ml',
        plan: 'basic',
      }));
      file = await jsonl('stores.jsonl', [
        ...good,
        '{not json',
        { tenantId: 'cli-imp', marketplace: 'ml', plan: 'basic' },
        { storeId: 'cli-imp-bad', tenantId: 'cli-imp', marketplace: 'ml', plan: 'gold' },
      ]);
    });

    it('creates every valid store and exits non-zero listing the failed lines', async () => {
      const r = await aq(['--json', 'stores', 'import', file, '--concurrency', '4']);
      const report = r.json() as { created: number; failed: { line: number }[] };
      expect({
        code: r.code,
        created: report.created,
        failedLines: report.failed.map((f) => f.line),
      }).toEqual({
        code: 1,
        created: 10,
        failedLines: [11, 12, 13],
      });
    });

    it('is safe to re-run: the same stores are updated', async () => {
      const r = await aq(['--json', 'stores', 'import', file]);
      expect(r.json()).toMatchObject({ created: 0, updated: 10 });
    });

    it('names the failed lines in its human report', async () => {
      const r = await aq(['stores', 'import', file]);
      expect(r.stdout).toContain('line 13 (cli-imp-bad): invalid_request');
    });
  });

  describe('campaigns', () => {
    it('put creates a store campaign, then replaces it', async () => {
      const args = [
        '--json',
        'campaigns',
        'put',
        'bf',
        '--store',
        STORE,
        '--from',
        '2026-11-27T00:00:00Z',
        '--until',
        '2026-11-30T00:00:00Z',
        '--plan',
        'enterprise',
        '--overrides',
        '{"ratePerSecond":40}',
        '--note',
        'Black Friday',
      ];
      const created = await aq(args);
      expect({ code: created.code, body: created.json() }).toMatchObject({
        code: 0,
        body: {
          campaignId: 'bf',
          storeId: STORE,
          from: '2026-11-27T00:00:00.000Z',
          plan: 'enterprise',
          overrides: { ratePerSecond: 40 },
          note: 'Black Friday',
        },
      });
      expect((await aq(args)).code).toBe(0);
    });

    it('put --tenant creates a tenant campaign; list shows it', async () => {
      const put = await aq([
        'campaigns',
        'put',
        'wide',
        '--tenant',
        'cli',
        '--from',
        '2026-11-27T00:00:00Z',
        '--until',
        '2026-11-28T00:00:00Z',
        '--overrides',
        '{"maxConcurrentConsumers":2}',
      ]);
      expect(put.code).toBe(0);
      const listed = await aq(['campaigns', 'list', '--tenant', 'cli']);
      expect(listed.stdout).toMatch(/wide\s+2026-11-27T00:00:00.000Z\s+2026-11-28T00:00:00.000Z/);
    });

    it('says why a window is refused', async () => {
      const r = await aq([
        'campaigns',
        'put',
        'long',
        '--store',
        STORE,
        '--from',
        '2026-01-01T00:00:00Z',
        '--until',
        '2026-06-01T00:00:00Z',
      ]);
      expect({ code: r.code, stderr: r.stderr }).toEqual({
        code: 1,
        stderr: expect.stringContaining('400 invalid_request: until: must be at most 90 days after from'),
      });
    });

    it('delete removes it, and a second delete says it is gone', async () => {
      expect((await aq(['campaigns', 'delete', 'bf', '--store', STORE])).code).toBe(0);
      const list = await aq(['--json', 'campaigns', 'list', '--store', STORE]);
      expect(list.json()).toEqual({ campaigns: [] });
      const again = await aq(['campaigns', 'delete', 'bf', '--store', STORE]);
      expect({ code: again.code, stderr: again.stderr }).toEqual({
        code: 1,
        stderr: expect.stringContaining('404 campaign_not_found'),
      });
    });
  });

  it('says what to set on a wrong admin token', async () => {
    const r = await aq(['stores', 'get', STORE], { ADMIN_TOKEN: 'wrong' });
    expect(r.stderr).toContain('401 unauthorized');
  });

  it('says when the endpoint cannot be reached', async () => {
    const r = await aq(['--endpoint', 'http://127.0.0.1:9', 'stores', 'get', STORE]);
    expect(r.stderr).toContain('cannot reach http://127.0.0.1:9');
  });

  it('runs through the package bin (npx aq)', async () => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['bin/aq.mjs', '--json', 'stores', 'get', STORE],
      {
        env: { ...process.env, ...env },
      },
    );
    expect(JSON.parse(stdout)).toMatchObject({ storeId: STORE });
  });
});
