import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

/** `npm start` as a person runs it: the real entry point, its children, Ctrl-C, DATA_DIR, a missing Java. */
/** What `npm start` runs: one node process with tsx as its loader (no tsx CLI relaying signals to a child). */
const LOCAL = ['--import', 'tsx', 'bin/local.ts'];
const ADMIN = 'local-mode-test-admin-token';

interface Running {
  child: ChildProcess;
  url: string;
  output: () => string;
}

const start = async (env: Record<string, string>): Promise<Running> => {
  const child = spawn(process.execPath, LOCAL, {
    env: { ...process.env, PORT: '0', ADMIN_TOKEN: ADMIN, ...env },
    // Its own process group, so `interrupt` can signal the group as a terminal's Ctrl-C does.
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (output += c.toString()));
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const match = /running at (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
    if (match?.[1]) return { child, url: match[1], output: () => output };
    if (child.exitCode !== null) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill('SIGKILL');
  throw new Error(`local mode did not start:\n${output}`);
};

/** Every process below `pid` (its emulators, and whatever they start). */
const descendantsOf = (pid: number): number[] => {
  const direct = spawnSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' })
    .stdout.split('\n')
    .map((s) => Number(s.trim()))
    .filter((n) => n > 0);
  return direct.flatMap((child) => [child, ...descendantsOf(child)]);
};

/** Running, as opposed to gone or a zombie awaiting its reaper (it has stopped all the same). */
const running = (pid: number): boolean => {
  const stat = spawnSync('ps', ['-o', 'stat=', '-p', String(pid)], { encoding: 'utf8' }).stdout.trim();
  return stat !== '' && !stat.startsWith('Z');
};

/**
 * SIGINT as a terminal's Ctrl-C sends it (`group`: every process of the foreground group, emulators
 * excepted since they run in groups of their own) or as `kill -INT` does (the one process).
 */
const interrupt = (run: Running, to: 'group' | 'process'): Promise<number | null> =>
  new Promise((resolve) => {
    run.child.once('exit', (code) => resolve(code));
    const pid = run.child.pid as number;
    process.kill(to === 'group' ? -pid : pid, 'SIGINT');
  });

describe('local mode (npm start)', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'aq-local-'));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('answers /health, and Ctrl-C stops it and every child process', async () => {
    const scripts = (JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> })
      .scripts;
    expect(scripts['start']).toBe(['node', ...LOCAL].join(' '));
    const run = await start({ DATA_DIR: dataDir });
    const health = await fetch(`${run.url}/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok' });
    const children = descendantsOf(run.child.pid as number);
    const commands = children.map(
      (pid) => spawnSync('ps', ['-o', 'args=', '-p', String(pid)], { encoding: 'utf8' }).stdout,
    );
    expect(commands.some((c) => c.includes('DynamoDBLocal.jar'))).toBe(true);
    expect(commands.some((c) => c.includes('fauxqs'))).toBe(true);
    expect(await interrupt(run, 'group')).toBe(0);
    // Local mode waits for its children before exiting; allow the OS a moment to reap them.
    for (let i = 0; i < 50 && children.some(running); i++) await new Promise((r) => setTimeout(r, 100));
    expect(children.filter(running)).toEqual([]);
  });

  it('keeps stores in DATA_DIR across a restart and recreates their queues', async () => {
    const first = await start({ DATA_DIR: dataDir });
    const headers = { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' };
    const put = await fetch(`${first.url}/admin/stores/kept`, {
      method: 'PUT',
      headers,
      body: JSON.stringify({ tenantId: 'acme', marketplace: 'amazon', plan: 'basic' }),
    });
    expect(put.status).toBe(201);
    expect(await interrupt(first, 'process')).toBe(0);

    const second = await start({ DATA_DIR: dataDir });
    const token = (await (
      await fetch(`${second.url}/admin/tenants/acme/tokens`, { method: 'POST', headers })
    ).json()) as { token: string };
    const accepted = await fetch(`${second.url}/v1/stores/kept/tasks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        eventId: 'after-restart',
        type: 'inventory.update',
        payload: { sku: 'A', quantity: 1 },
      }),
    });
    expect(accepted.status).toBe(202);
    expect(await interrupt(second, 'group')).toBe(0);
  });

  it('says plainly that Java is missing, without a stack trace', () => {
    const bin = mkdtempSync(join(tmpdir(), 'aq-nojava-'));
    symlinkSync(process.execPath, join(bin, 'node'));
    const result = spawnSync(process.execPath, LOCAL, {
      env: { PATH: bin, HOME: process.env['HOME'] ?? '/tmp', PORT: '0', DATA_DIR: dataDir },
      encoding: 'utf8',
      timeout: 30_000,
    });
    rmSync(bin, { recursive: true, force: true });
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('Java 17 or newer is required');
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });
});
