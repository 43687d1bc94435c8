import { mkdirSync, writeFileSync } from 'node:fs';
import { startDynamoDbLocal, startFauxqs } from '../bin/local/emulators.js';
import { createAwsClients } from '../lambdas/adapters/aws-clients.js';
import {
  measureCeiling,
  measureDynamoCeiling,
  measureFairness,
  measureThroughput,
  warmUp,
  type FairnessResult,
  type ThroughputResult,
} from './pipeline/pipeline.js';
import {
  overheadShare,
  pipelineFigures,
  pipelineReport,
  pipelineTargets,
  type PipelineFigures,
} from './pipeline/report.js';
import { round } from './pipeline/stats.js';
import { runSimulationPart } from './sim-main.js';
import type { TargetRow } from './sim/targets.js';
import { writeSummary } from './summary.js';

/**
 * `npm run bench [-- --quick | --sim-only | --quick-pipeline]`: part 1, the real pipeline on the emulators
 * (bench/results/pipeline.md), then part 2, the designs compared at scale in simulated time
 * (bench/results/simulation.md and latency-vs-backlog.svg); both into bench/results/summary.json.
 * `--sim-only` runs part 2 alone (deterministic) and keeps the pipeline part of the previous summary.
 * Not part of `npm test`: it measures, it does not assert.
 */
const quick = process.argv.includes('--quick');
const simOnly = process.argv.includes('--sim-only');
/** Part 1 at its quick size only (a loaded machine), part 2 in full; the summary says so (`pipeline.quick`). */
const quickPipeline = quick || process.argv.includes('--quick-pipeline');
const summaryPath = `bench/results/summary${quick ? '-quick' : ''}.json`;
const progress = (message: string) =>
  process.stdout.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}\n`);

const runPipeline = async (
  startedAt: Date,
  t0: number,
): Promise<{ figures: PipelineFigures; targets: TargetRow[]; quick: boolean }> => {
  progress(`part 1: starting the emulators${quickPipeline ? ' (quick mode)' : ''}`);
  const [dynamo, sqs] = await Promise.all([startDynamoDbLocal(), startFauxqs()]);
  const endpoints = { dynamo: dynamo.endpoint, sqs: sqs.endpoint };
  const clients = createAwsClients({
    region: 'us-east-1',
    sqsEndpoint: sqs.endpoint,
    dynamoEndpoint: dynamo.endpoint,
  });
  try {
    progress('part 1: warming the emulators (ceiling passes and one pipeline run, discarded)');
    const cold = await warmUp(clients, endpoints, {
      sqsMessages: quickPipeline ? 2_000 : 20_000,
      dynamoWrites: quickPipeline ? 1_000 : 8_000,
      sqsPasses: quickPipeline ? 1 : 2,
      dynamoPasses: quickPipeline ? 1 : 4,
      tasks: quickPipeline ? 400 : 2_000,
    });
    progress(
      `  first passes, cold: ${round(cold.sqs, 0)} messages/s, ${round(cold.dynamo, 0)} conditional writes/s`,
    );
    progress('part 1: emulator ceiling');
    const ceiling = await measureCeiling(clients.sqs, quickPipeline ? 2_000 : 20_000);
    progress(`  fauxqs ceiling ${round(ceiling, 0)} messages/s`);
    const dynamoCeiling = await measureDynamoCeiling(clients.dynamo, quickPipeline ? 1_000 : 8_000);
    progress(`  DynamoDB Local ceiling ${round(dynamoCeiling, 0)} conditional writes/s`);

    const throughput: ThroughputResult[] = [];
    const pools = quickPipeline ? [1, 4] : [1, 4, 16];
    const latencies = quickPipeline ? [0] : [0, 20];
    const tasks = quickPipeline ? 400 : 2_000;
    for (const latencyMs of latencies) {
      for (const poolSize of pools) {
        progress(`part 1: throughput with ${poolSize} workers, ${latencyMs} ms marketplace, ${tasks} tasks`);
        const result = await measureThroughput(endpoints, { poolSize, latencyMs, stores: 10, tasks });
        progress(
          `  ${round(result.tasksPerSecond, 0)} tasks/s; attention overhead ${round(100 * overheadShare(result), 1)}%`,
        );
        throughput.push(result);
      }
    }
    const counted =
      throughput.find((r) => r.poolSize === 4 && r.latencyMs === 0) ?? (throughput[0] as ThroughputResult);

    const fairness: FairnessResult[] = [];
    for (const backlog of quickPipeline ? [0, 300] : [0, 1_000, 10_000]) {
      progress(`part 1: fairness, big store backlog ${backlog || 'none'}`);
      const result = await measureFairness(endpoints, {
        backlog,
        smallStores: quickPipeline ? 5 : 20,
        periodMs: 500,
        minDurationMs: quickPipeline ? 3_000 : 10_000,
        poolSize: 8,
        latencyMs: 5,
      });
      progress(
        `  small-store p50 ${round(result.p50Ms, 0)} ms, p99 ${round(result.p99Ms, 0)} ms over ${result.smallTasks} tasks`,
      );
      fairness.push(result);
    }
    const args = {
      quick: quickPipeline,
      ceiling,
      dynamoCeiling,
      cold,
      throughput,
      counted,
      fairness,
      startedAt,
      seconds: (performance.now() - t0) / 1000,
    };
    const report = pipelineReport(args);
    writeFileSync(quickPipeline ? 'bench/results/pipeline-quick.md' : 'bench/results/pipeline.md', report);
    progress(
      `part 1 done in ${round((performance.now() - t0) / 1000, 0)} s → bench/results/${quickPipeline ? 'pipeline-quick' : 'pipeline'}.md`,
    );
    const figures = pipelineFigures(args);
    return { figures, targets: pipelineTargets(figures), quick: quickPipeline };
  } finally {
    clients.sqs.destroy();
    clients.dynamo.destroy();
    await Promise.all([dynamo.stop(), sqs.stop()]);
  }
};

const main = async (): Promise<void> => {
  const startedAt = new Date();
  const t0 = performance.now();
  mkdirSync('bench/results', { recursive: true });
  const pipeline = simOnly ? undefined : await runPipeline(startedAt, t0);
  const t1 = performance.now();
  progress('part 2: the designs at scale (simulated time)');
  const simulation = await runSimulationPart({ quick, onProgress: (m) => progress(`  ${m}`) });
  progress(`part 2 done in ${round((performance.now() - t1) / 1000, 0)} s → ${simulation.files.join(', ')}`);
  await writeSummary(summaryPath, {
    quick,
    outcome: simulation.outcome,
    ...(pipeline === undefined ? {} : { pipeline }),
  });
  progress(
    `benchmark done in ${round((performance.now() - t0) / 1000, 0)} s → ${summaryPath}${simOnly ? ' (pipeline part kept from the previous run)' : ''}`,
  );
};

main().catch((error: unknown) => {
  process.stderr.write(
    `benchmark failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
