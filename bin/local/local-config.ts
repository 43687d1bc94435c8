import { z } from 'zod';
import { LIMIT_HEADER_MODES } from './marketplace-limit.js';
import { WORKER_EVENT_SOURCE } from '../../lambdas/config/topology.js';
import {
  DEFAULT_HIGH_HEADROOM_PERCENT,
  DEFAULT_PRIORITY_SHARES,
  parsePriorityShares,
  type PriorityShares,
} from '../../lambdas/core/priority-shares.js';

/** Local mode's environment (contract: PORT, ADMIN_TOKEN, MARKETPLACE_BASE_URL, DATA_DIR; the rest are ours). */
const LocalEnvSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65_535).default(3000),
  // Any token the operator chooses (the contract sets no form) that a bearer header can carry: one word. One
  // shorter than ADMIN_TOKEN_ADVISED_LENGTH is taken with a warning at start-up (adminTokenWarning), not refused:
  // local mode is a developer's machine.
  ADMIN_TOKEN: z
    .string()
    .min(1, 'must not be empty (unset it to have one generated)')
    .regex(/^\S+$/, 'must be one word: "Authorization: Bearer <token>" cannot carry spaces')
    .optional(),
  MARKETPLACE_BASE_URL: z.url().optional(),
  DATA_DIR: z.string().min(1).default('.local'),
  AQ_WORKER_POOL_SIZE: z.coerce.number().int().min(1).max(64).default(4),
  /** Attentions per worker invocation, their slices run concurrently (as the stack's `workerBatchSize`). */
  AQ_WORKER_BATCH_SIZE: z.coerce
    .number()
    .int()
    .min(WORKER_EVENT_SOURCE.minBatchSize)
    .max(WORKER_EVENT_SOURCE.maxBatchSize)
    .default(WORKER_EVENT_SOURCE.defaultBatchSize),
  /** Store priority: each level's share of a saturated pool, `high,normal,low` in percent (e.g. `50,30,20`). */
  AQ_WORKER_POOL_SHARES: z
    .string()
    .optional()
    .transform((text, ctx): PriorityShares => {
      if (text === undefined || text === '') return DEFAULT_PRIORITY_SHARES;
      try {
        return parsePriorityShares(text, 'AQ_WORKER_POOL_SHARES');
      } catch (error) {
        ctx.addIssue({ code: 'custom', message: (error as Error).message });
        return z.NEVER;
      }
    }),
  /** Percent of the pool kept for `high` stores while lower levels saturate it (rounded down; 0 keeps none). */
  AQ_WORKER_POOL_HEADROOM: z.coerce.number().int().min(0).max(50).default(DEFAULT_HIGH_HEADROOM_PERCENT),
  AQ_RECONCILE_INTERVAL_SECONDS: z.coerce.number().int().min(1).max(3600).default(60),
  SIM_MARKETPLACE_LATENCY_MS: z.coerce.number().int().min(0).max(60_000).default(20),
  SIM_MARKETPLACE_ERROR_RATE: z.coerce.number().min(0).max(1).default(0),
  SIM_MARKETPLACE_THROTTLE_RATE: z.coerce.number().min(0).max(1).default(0),
  /** The simulated marketplace's own limit per store (calls per second; unset: none), and how it says so. */
  SIM_MARKETPLACE_RATE_LIMIT: z.coerce.number().positive().max(10_000).optional(),
  SIM_MARKETPLACE_RATE_HEADERS: z.enum(LIMIT_HEADER_MODES).default('none'),
});
export type LocalEnv = z.infer<typeof LocalEnvSchema>;

/** An admin token shorter than this is guessable: local mode warns at start-up (it still takes it). */
export const ADMIN_TOKEN_ADVISED_LENGTH = 16;

/** The start-up warning for a chosen admin token that is short enough to guess, if it is. */
export const adminTokenWarning = (token: string | undefined, url: string): string | undefined =>
  token !== undefined && token.length < ADMIN_TOKEN_ADVISED_LENGTH
    ? `Warning: ADMIN_TOKEN is shorter than ${ADMIN_TOKEN_ADVISED_LENGTH} characters; anyone who can reach ${url} could guess it.`
    : undefined;

export const loadLocalEnv = (env: Record<string, string | undefined> = process.env): LocalEnv => {
  const result = LocalEnvSchema.safeParse(env);
  if (!result.success) {
    throw new Error(
      `invalid local-mode environment: ${result.error.issues.map((i) => `${String(i.path[0])}: ${i.message}`).join('; ')}`,
    );
  }
  return result.data;
};
