#!/usr/bin/env node
/**
 * `npm test`'s runner. The integration project runs its files one at a time (they share two cores and the
 * emulators), and vitest starts such files only after every parallel file of the other projects has run:
 * the integration chain, the longest part of the suite, would wait minutes for the unit, infra and
 * simulation files to finish importing. This starts both at once, as two vitest processes: the integration
 * project's output streams as it runs, the others' is printed whole when they finish (so the two never
 * interleave), and the exit code is non-zero if either failed. Arguments (`npm test -- <filter>`) go to one
 * plain `vitest run` instead.
 */
import { Buffer } from 'node:buffer';
import { spawn } from 'node:child_process';
import process from 'node:process';

const vitest = (args, capture) =>
  new Promise((resolve) => {
    const child = spawn(process.execPath, ['node_modules/vitest/vitest.mjs', 'run', ...args], {
      stdio: capture ? ['ignore', 'pipe', 'pipe'] : 'inherit',
      env: { ...process.env, FORCE_COLOR: process.env.FORCE_COLOR ?? '1' },
    });
    const chunks = [];
    if (capture) {
      child.stdout.on('data', (chunk) => chunks.push(chunk));
      child.stderr.on('data', (chunk) => chunks.push(chunk));
    }
    child.on('exit', (code, signal) =>
      resolve({ code: code ?? (signal ? 1 : 0), output: Buffer.concat(chunks) }),
    );
  });

const args = process.argv.slice(2);
if (args.length > 0) {
  const { code } = await vitest(args, false);
  process.exit(code);
}
const [integration, rest] = await Promise.all([
  vitest(['--project', 'integration'], false),
  vitest(['--project', 'unit', '--project', 'infra', '--project', 'sim'], true),
]);
process.stdout.write('\n── unit, infra and simulation projects ──\n');
process.stdout.write(rest.output);
process.exit(integration.code !== 0 || rest.code !== 0 ? 1 : 0);
