import { z } from 'zod';
import { QUEUE_PREFIX_PATTERN } from '../core/names.js';
import {
  DEFAULT_MARKETPLACE_TIMEOUT_MS,
  EXPIRY_AGE_MS,
  MAX_DELAY_SECONDS,
  MAX_MARKETPLACE_TIMEOUT_MS,
  REFRESH_AGE_MS,
  RETENTION_BATCHES_PER_RUN,
  RETENTION_COPY_DELAY_SECONDS,
  STORE_RETENTION_MS,
} from '../core/timing.js';
import { EnvNames } from './env-names.js';

/**
 * Every setting the runtime reads, parsed once at cold start. A bad or missing value fails with the
 * variable's name. Each function parses only the part it needs (see the picks below).
 */
const intInRange = (min: number, max: number, fallback: number) =>
  z.coerce.number().int().min(min).max(max).default(fallback);

const FullConfigSchema = z.object({
  [EnvNames.region]: z.string().min(1).default('us-east-1'),
  [EnvNames.queuePrefix]: z
    .string()
    .regex(QUEUE_PREFIX_PATTERN, 'lowercase letters and digits, starting with a letter, ≤ 16 chars'),
  [EnvNames.storesTable]: z.string().min(1),
  [EnvNames.dispatchTable]: z.string().min(1),
  [EnvNames.tokensTable]: z.string().min(1),
  [EnvNames.deliveriesTable]: z.string().min(1),
  [EnvNames.attentionQueueUrl]: z.url(),
  [EnvNames.attentionQueueUrlHigh]: z.url().optional(),
  [EnvNames.attentionQueueUrlLow]: z.url().optional(),
  [EnvNames.confirmQueueUrl]: z.url().optional(),
  [EnvNames.marketplaceBaseUrl]: z.url(),
  [EnvNames.marketplaceTimeoutMs]: intInRange(
    100,
    MAX_MARKETPLACE_TIMEOUT_MS,
    DEFAULT_MARKETPLACE_TIMEOUT_MS,
  ),
  [EnvNames.emptyPollSeconds]: intInRange(1, 20, 1),
  [EnvNames.attentionGraceSeconds]: intInRange(1, 900, 20),
  [EnvNames.sweepStoresPerRun]: intInRange(0, 10_000, 35),
  [EnvNames.storeCacheSeconds]: intInRange(0, 300, 0),
  // Retention (issue #10): at most SQS's 14 days, so a setting cannot outlive the queue's own retention.
  [EnvNames.expiryAgeSeconds]: intInRange(1, STORE_RETENTION_MS / 1000, EXPIRY_AGE_MS / 1000),
  [EnvNames.refreshAgeSeconds]: intInRange(1, STORE_RETENTION_MS / 1000, REFRESH_AGE_MS / 1000),
  [EnvNames.refreshCopyDelaySeconds]: intInRange(0, MAX_DELAY_SECONDS, RETENTION_COPY_DELAY_SECONDS),
  [EnvNames.refreshBatchesPerRun]: intInRange(0, 10_000, RETENTION_BATCHES_PER_RUN),
  [EnvNames.usagePlanStage]: z
    .string()
    .regex(/^[a-z0-9]+:[A-Za-z0-9_-]+$/, '{restApiId}:{stageName}')
    .optional(),
  [EnvNames.levelFloors]: z
    .string()
    .regex(/^high=\d+,normal=\d+,low=\d+$/, "high=N,normal=N,low=N (each level's floor)")
    .optional(),
  [EnvNames.levelMappings]: z
    .string()
    .regex(/^high=[\w-]+,normal=[\w-]+,low=[\w-]+$/, 'high=UUID,normal=UUID,low=UUID (event source mappings)')
    .optional(),
  [EnvNames.levelLoans]: z.enum(['on', 'off']).default('on'),
  [EnvNames.sqsEndpoint]: z.url().optional(),
  [EnvNames.dynamoEndpoint]: z.url().optional(),
});

type Full = z.infer<typeof FullConfigSchema>;

const pickOf = (keys: readonly (keyof Full)[]): z.ZodType =>
  FullConfigSchema.pick(Object.fromEntries(keys.map((k) => [k, true])) as Record<keyof Full, true>);

/** Every function that publishes attentions knows every level's queue. */
const ATTENTION_QUEUES = [
  EnvNames.attentionQueueUrl,
  EnvNames.attentionQueueUrlHigh,
  EnvNames.attentionQueueUrlLow,
] as const;

const COMMON = [EnvNames.region, EnvNames.sqsEndpoint, EnvNames.dynamoEndpoint] as const;

export const FunctionEnv = {
  ingest: [
    ...COMMON,
    EnvNames.storesTable,
    EnvNames.dispatchTable,
    EnvNames.deliveriesTable,
    ...ATTENTION_QUEUES,
    EnvNames.storeCacheSeconds,
  ],
  admin: [
    ...COMMON,
    EnvNames.queuePrefix,
    EnvNames.storesTable,
    EnvNames.dispatchTable,
    EnvNames.tokensTable,
    ...ATTENTION_QUEUES,
    EnvNames.usagePlanStage,
  ],
  authorizer: [...COMMON, EnvNames.tokensTable],
  worker: [
    ...COMMON,
    EnvNames.storesTable,
    EnvNames.dispatchTable,
    EnvNames.deliveriesTable,
    ...ATTENTION_QUEUES,
    // Only a slice publishes to the confirm queue.
    EnvNames.confirmQueueUrl,
    EnvNames.marketplaceBaseUrl,
    EnvNames.marketplaceTimeoutMs,
    EnvNames.emptyPollSeconds,
    EnvNames.expiryAgeSeconds,
  ],
  reconciler: [
    ...COMMON,
    EnvNames.storesTable,
    EnvNames.dispatchTable,
    ...ATTENTION_QUEUES,
    EnvNames.attentionGraceSeconds,
    EnvNames.sweepStoresPerRun,
    EnvNames.refreshAgeSeconds,
    EnvNames.refreshCopyDelaySeconds,
    EnvNames.refreshBatchesPerRun,
    EnvNames.levelFloors,
    EnvNames.levelMappings,
    EnvNames.levelLoans,
  ],
} as const;

export type FunctionName = keyof typeof FunctionEnv;
export type FunctionConfig<F extends FunctionName> = Pick<Full, (typeof FunctionEnv)[F][number]>;

export class ConfigError extends Error {}

/** Parses the variables function `fn` needs from `env`; throws naming each bad variable. */
export const loadConfig = <F extends FunctionName>(
  fn: F,
  env: Record<string, string | undefined>,
): FunctionConfig<F> => {
  const schema = pickOf(FunctionEnv[fn]);
  const result = schema.safeParse(env);
  if (!result.success) {
    const problems = result.error.issues.map((i) => `${String(i.path[0])}: ${i.message}`).join('; ');
    throw new ConfigError(`invalid configuration for the ${fn} function: ${problems}`);
  }
  return result.data as FunctionConfig<F>;
};

/** The one place that reads the process environment. */
export const loadConfigFromProcess = <F extends FunctionName>(fn: F): FunctionConfig<F> =>
  loadConfig(fn, process.env);

/**
 * Whether a process may trace: on Lambda (where Powertools traces at all), unless POWERTOOLS_TRACE_ENABLED is false
 * (the stack sets it so with `-c tracing=false`). Elsewhere the tracer is not even loaded (`adapters/tracing.ts`).
 */
export const tracingWanted = (env: NodeJS.ProcessEnv): boolean =>
  env['AWS_LAMBDA_FUNCTION_NAME'] !== undefined && env[EnvNames.traceEnabled] !== 'false';

/** Whether this process may trace (`tracingWanted` of the process environment). */
export const processTracingWanted = (): boolean => tracingWanted(process.env);

/**
 * The X-Ray trace header of the Lambda invocation running now (`_X_AMZN_TRACE_ID`): unlike the settings
 * above it changes with every invocation, so it is read at each request, not loaded once — but here, with
 * the rest of the environment.
 */
export const invocationTraceHeader = (): string | undefined => process.env['_X_AMZN_TRACE_ID'];
