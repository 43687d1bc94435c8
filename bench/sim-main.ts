/**
 * Issue #6, part 2: the dispatch designs side by side in a discrete-event simulation at scale.
 *
 *   npx tsx bench/sim-main.ts [--quick]
 *
 * Writes bench/results/simulation.md and bench/results/latency-vs-backlog.svg (quick mode writes
 * simulation-quick.md and latency-vs-backlog-quick.svg, so a smoke run never overwrites the full figures).
 * The bench runner calls runSimulationPart().
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { format, resolveConfig } from 'prettier';
import { FULL_CONFIG, QUICK_CONFIG, runSimulation, type SimConfig, type SimOutcome } from './sim/part.js';
import { renderMarkdown, renderPlot, type Machine } from './sim/report.js';

export interface SimulationPartOptions {
  quick?: boolean;
  onProgress?: (message: string) => void;
  /** Where the results go; default bench/results. */
  outDir?: string;
  /** false: compute and return only (tests). */
  write?: boolean;
  /** Overrides the chosen config (tests use a tiny one). */
  config?: SimConfig;
}

export interface SimulationPartResult {
  outcome: SimOutcome;
  markdown: string;
  svg: string;
  files: string[];
}

const machine = (): Machine => {
  let memory = `${(totalmem() / 2 ** 30).toFixed(1)} GiB`;
  try {
    const free = execFileSync('free', ['-h'], { encoding: 'utf8' });
    const line = free.split('\n').find((l) => l.startsWith('Mem:'));
    if (line !== undefined) memory = `${line.split(/\s+/)[1] ?? memory} (free -h)`;
  } catch {
    // keep os.totalmem()
  }
  let cores = cpus().length;
  try {
    cores = Number(execFileSync('nproc', { encoding: 'utf8' }).trim()) || cores;
  } catch {
    // keep os.cpus()
  }
  return {
    cores,
    memory,
    cpu: cpus()[0]?.model ?? 'unknown CPU',
    node: process.version,
    date: new Date().toISOString(),
  };
};

export const runSimulationPart = async (
  options: SimulationPartOptions = {},
): Promise<SimulationPartResult> => {
  const quick = options.quick ?? false;
  const config = options.config ?? (quick ? QUICK_CONFIG : FULL_CONFIG);
  const outcome = runSimulation(config, options.onProgress);
  // Formatted with the repository's Prettier settings, so `prettier --check .` passes on the results.
  const dir = options.outDir ?? join(dirname(fileURLToPath(import.meta.url)), 'results');
  const suffix = quick ? '-quick' : '';
  const md = join(dir, `simulation${suffix}.md`);
  const markdown = await format(renderMarkdown(outcome, machine(), quick), {
    ...((await resolveConfig(md)) ?? {}),
    filepath: md,
  });
  const svg = renderPlot(outcome);
  const files: string[] = [];
  if (options.write ?? true) {
    mkdirSync(dir, { recursive: true });
    const plot = join(dir, `latency-vs-backlog${suffix}.svg`);
    writeFileSync(md, markdown);
    writeFileSync(plot, svg);
    files.push(md, plot);
  }
  return { outcome, markdown, svg, files };
};

const isMain = process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;
if (isMain) {
  const quick = process.argv.includes('--quick');
  const started = Date.now();
  const result = await runSimulationPart({ quick, onProgress: (m) => console.log(m) });
  console.log(`[sim] wrote ${result.files.join(', ')} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}
