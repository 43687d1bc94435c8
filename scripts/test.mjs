#!/usr/bin/env node
/**
 * `npm test`'s runner. The integration project runs its files one at a time (they share the emulators), and
 * vitest starts such files only after every parallel file of the other projects has run: the integration
 * chain, the longest part of the suite, would wait minutes for the unit, infra and simulation files to finish
 * importing. This runs three vitest processes at once, each with its own emulators (the global setup starts
 * them on free ports): the integration project's protocol files, its API files (request-heavy fuzzing of the
 * HTTP API and the local-mode process tests — no timing in them to disturb), and the unit, infra and
 * simulation projects. The first streams as it runs, the others' output is printed whole when they finish
 * (so nothing interleaves), a summary at the end repeats each chain's verdict and failing tests, and the exit
 * code is non-zero if any failed. Arguments (`npm test -- <filter>`)
 * go to one plain `vitest run` instead.
 */
import { Buffer } from 'node:buffer';
import { spawn } from 'node:child_process';
import process from 'node:process';

/**
 * Integration files that only send requests and check answers, run beside the protocol files — and
 * noisy-neighbour, the longest protocol file (its checks are orders and counts, with a drain wait that allows
 * for a loaded machine), so the two integration chains take about as long as each other.
 */
const API_FILES = [
  'test/integration/http-fuzz.test.ts',
  'test/integration/openapi.test.ts',
  'test/integration/local-mode.test.ts',
  'test/integration/task-content.test.ts',
  'test/integration/http-api.test.ts',
  'test/integration/cli.test.ts',
  'test/integration/security.test.ts',
  'test/integration/dashboard-browser.test.ts',
  'test/integration/noisy-neighbour.test.ts',
  // Dependency outages through a fault proxy: answers and counts, no timing; it evens the two chains.
  'test/integration/faults-dependencies.test.ts',
];

/** `stream`: also write the output as it comes (the first chain); it is always kept for the summary. */
const vitest = (args, capture, stream = false) =>
  new Promise((resolve) => {
    const child = spawn(process.execPath, ['node_modules/vitest/vitest.mjs', 'run', ...args], {
      stdio: capture ? ['ignore', 'pipe', 'pipe'] : 'inherit',
      env: { ...process.env, FORCE_COLOR: process.env.FORCE_COLOR ?? '1' },
    });
    const chunks = [];
    if (capture) {
      const keep = (to) => (chunk) => {
        chunks.push(chunk);
        if (stream) to.write(chunk);
      };
      child.stdout.on('data', keep(process.stdout));
      child.stderr.on('data', keep(process.stderr));
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
const [protocol, api, rest] = await Promise.all([
  vitest(['--project', 'integration', ...API_FILES.flatMap((file) => ['--exclude', file])], true, true),
  vitest(['--project', 'integration', ...API_FILES], true),
  vitest(['--project', 'unit', '--project', 'infra', '--project', 'sim'], true),
]);
process.stdout.write('\n── integration project: API files ──\n');
process.stdout.write(api.output);
process.stdout.write('\n── unit, infra and simulation projects ──\n');
process.stdout.write(rest.output);

/**
 * The last lines CI shows are the end of the output, so every chain's verdict and its failing files and
 * tests are repeated here, whichever chain they came from.
 */
// eslint-disable-next-line no-control-regex -- vitest's colour codes
const plain = (text) => text.replace(/\u001b\[[0-9;]*m/g, '');
/** Failing files and tests, and under each detailed `FAIL` header the first lines of its error (message, diff, place). */
const failures = (output) => {
  const lines = plain(output.toString('utf8')).split('\n');
  const picked = [];
  lines.forEach((line, i) => {
    if (/^\s*(×|❯ .*\(\d+ tests? \| \d+ failed)/.test(line) || /Test Files .*failed/.test(line))
      picked.push(line);
    if (/^\s*FAIL\s/.test(line))
      picked.push(
        line,
        ...lines
          .slice(i + 1, i + 16)
          .filter((l) => l.trim() !== '' && !/^\s*FAIL\s/.test(l))
          .slice(0, 10),
      );
  });
  return picked;
};
process.stdout.write('\n── summary ──\n');
for (const [name, run] of [
  ['integration, protocol files', protocol],
  ['integration, API files', api],
  ['unit, infra and simulation', rest],
]) {
  process.stdout.write(`${name}: ${run.code === 0 ? 'passed' : `FAILED (exit ${run.code})`}\n`);
  if (run.code !== 0)
    for (const line of [...new Set(failures(run.output))].slice(0, 80))
      process.stdout.write(`  ${line.trim()}\n`);
}
process.exit([protocol, api, rest].some((run) => run.code !== 0) ? 1 : 0);
