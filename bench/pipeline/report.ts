import { cpus, totalmem } from 'node:os';
import type { FairnessResult, ThroughputResult } from './pipeline.js';
import { dollarsPerMillionTasks, type RequestClass } from './request-counter.js';
import { round } from './stats.js';

/** Markdown for bench/results/pipeline.md: one table per measurement, the machine, and the targets. */
export const machine = (): string =>
  `${cpus().length} cores (${cpus()[0]?.model.trim() ?? 'unknown'}), ${round(totalmem() / 2 ** 30, 1)} GiB, Node ${process.version}`;

/** The pattern's own cost (issue #6): attentions, leases and slots, ingest's signalling, queue attribute reads. */
const ATTENTION_OVERHEAD: RequestClass[] = [
  'attention queue',
  'dispatch: leases and slots',
  'dispatch: enqueue signalling',
  'queue attributes',
];

export const overheadShare = (r: ThroughputResult): number => {
  const overhead = ATTENTION_OVERHEAD.reduce((sum, cls) => sum + (r.counts.byClass.get(cls) ?? 0), 0);
  return overhead / r.counts.total;
};

export const pipelineReport = (args: {
  quick: boolean;
  ceiling: number;
  throughput: ThroughputResult[];
  counted: ThroughputResult;
  fairness: FairnessResult[];
  startedAt: Date;
  seconds: number;
}): string => {
  const { ceiling, throughput, counted, fairness } = args;
  const lines: string[] = [];
  lines.push(`# Benchmark part 1: the real pipeline on the emulators${args.quick ? ' (--quick)' : ''}`);
  lines.push('');
  lines.push(`Run ${args.startedAt.toISOString()} on ${machine()}; took ${round(args.seconds, 0)} s.`);
  lines.push(
    'DynamoDB Local and fauxqs run as child processes; the handlers, the local API Gateway and event-source',
  );
  lines.push(
    "stand-ins and the marketplace simulator share one Node process. Absolute numbers are this machine's;",
  );
  lines.push('compare ratios measured in the same run.');
  lines.push('');
  lines.push('## Ceiling and throughput');
  lines.push('');
  lines.push(
    `Emulator ceiling (SendMessageBatch + ReceiveMessage + DeleteMessageBatch, 8 lanes): **${round(ceiling, 0)} messages/s**.`,
  );
  lines.push('');
  lines.push(
    '| workers | marketplace latency | tasks | tasks/s (HTTP ingest → delivery) | ratio to ceiling |',
  );
  lines.push('|---:|---:|---:|---:|---:|');
  for (const r of throughput) {
    lines.push(
      `| ${r.poolSize} | ${r.latencyMs} ms | ${r.tasks} | ${round(r.tasksPerSecond, 0)} | ${round((100 * r.tasksPerSecond) / ceiling, 0)}% |`,
    );
  }
  lines.push('');
  lines.push(
    `## Requests per task (counted at the SDK clients; ${counted.poolSize} workers, ${counted.latencyMs} ms marketplace, ${counted.tasks} tasks)`,
  );
  lines.push('');
  lines.push('| request class | requests | per task |');
  lines.push('|---|---:|---:|');
  const classes = [...counted.counts.byClass.entries()].sort((a, b) => b[1] - a[1]);
  for (const [cls, n] of classes) lines.push(`| ${cls} | ${n} | ${round(n / counted.tasks, 3)} |`);
  lines.push(`| **all** | ${counted.counts.total} | ${round(counted.counts.total / counted.tasks, 3)} |`);
  lines.push('');
  lines.push('| SQS action | requests |');
  lines.push('|---|---:|');
  for (const [name, n] of [...counted.counts.sqs.entries()].sort((a, b) => b[1] - a[1]))
    lines.push(`| ${name.replace('Command', '')} | ${n} |`);
  lines.push(`| DynamoDB reads / writes | ${counted.counts.dynamoReads} / ${counted.counts.dynamoWrites} |`);
  lines.push(`| worker invocations | ${counted.invocations} |`);
  lines.push('');
  const share = overheadShare(counted);
  lines.push(
    `Attention overhead (attention queue send/receive/delete, lease and slot writes, ingest's enqueue-sequence bumps, queue attribute reads): **${round(100 * share, 1)}%** of all requests. Rate reservations and effect-once records are delivery guarantees, counted apart.`,
  );
  lines.push(
    `Cost at us-east-1 list prices (SQS $0.40/M, DynamoDB $0.625/M writes and $0.125/M reads, Lambda $0.20/M invocations, duration excluded): **$${round(dollarsPerMillionTasks(counted.counts, counted.tasks, counted.invocations), 2)} per million tasks**.`,
  );
  lines.push('');
  lines.push('## Fairness on the real stack');
  lines.push('');
  lines.push(
    'Small basic stores post one task each per period; one pro store drains a backlog meanwhile. Latency is from sending the',
  );
  lines.push('request to the end of the marketplace call.');
  lines.push('');
  lines.push('| big store backlog | small-store tasks | p50 | p99 | big store drained in |');
  lines.push('|---:|---:|---:|---:|---:|');
  for (const f of fairness) {
    lines.push(
      `| ${f.backlog === 0 ? 'none (idle system)' : f.backlog} | ${f.smallTasks} | ${round(f.p50Ms, 0)} ms | ${round(f.p99Ms, 0)} ms | ${f.bigDrainSeconds === undefined ? '—' : `${round(f.bigDrainSeconds, 1)} s`} |`,
    );
  }
  lines.push('');
  const idle = fairness.find((f) => f.backlog === 0);
  const biggest = [...fairness].sort((a, b) => b.backlog - a.backlog)[0];
  const best = [...throughput]
    .filter((r) => r.latencyMs === 0)
    .sort((a, b) => b.tasksPerSecond - a.tasksPerSecond)[0];
  lines.push('## Targets (issue #6)');
  lines.push('');
  lines.push(
    `- Attention overhead ≤ 5% of all AWS requests while stores are backlogged: **${round(100 * share, 1)}%** — ${share <= 0.05 ? 'met' : 'not met'}.`,
  );
  if (idle && biggest && biggest.backlog > 0) {
    const ratio = biggest.p99Ms / idle.p99Ms;
    lines.push(
      `- Small-store p99 while a ${biggest.backlog}-task backlog drains ≤ 2 × idle p99: **${round(ratio, 2)} ×** — ${ratio <= 2 ? 'met' : 'not met'}.`,
    );
  }
  if (best) {
    const ratio = best.tasksPerSecond / ceiling;
    lines.push(
      `- Full-pipeline throughput (0 ms marketplace) ≥ 50% of the emulator ceiling: **${round(100 * ratio, 0)}%** (${best.poolSize} workers) — ${ratio >= 0.5 ? 'met' : 'not met'}.`,
    );
  }
  lines.push('');
  return lines.join('\n');
};
