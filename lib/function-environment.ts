import { EnvNames, type EnvName } from '../lambdas/config/env-names.js';
import type { FunctionName } from '../lambdas/config/runtime-config.js';
import { FUNCTIONS } from '../lambdas/config/topology.js';
import { METRICS_NAMESPACE } from '../lambdas/core/names.js';
import { MAX_MARKETPLACE_TIMEOUT_MS } from '../lambdas/core/timing.js';
import { InvalidPropError, requireIntegerInRange } from './validation.js';

/**
 * Every value the stack knows at deploy time, by variable name. It is built once, in the stack, and
 * each function takes only the names its topology entry lists, so a function never sees a variable
 * it does not read.
 */
export type DeployEnvironment = Partial<Record<EnvName, string>>;

/**
 * Never set on a deployed function: the endpoint overrides point the SDK at local emulators, and
 * Lambda sets AWS_REGION itself (it is a reserved name).
 */
const NEVER_DEPLOYED: readonly EnvName[] = [EnvNames.sqsEndpoint, EnvNames.dynamoEndpoint, EnvNames.region];

/**
 * Set on AWS only, by the construct that owns what they point at (not the stack-wide environment); local
 * mode leaves them unset on purpose and the runtime then uses its in-process stand-in. The synth check
 * below still requires them on a deployed function.
 */
export const DEPLOYED_ONLY: readonly EnvName[] = [EnvNames.usagePlanStage];

/** Settings with a runtime default: leaving them out is fine. Every other listed name must be provided. */
export const RUNTIME_DEFAULTED: readonly EnvName[] = [
  EnvNames.marketplaceTimeoutMs,
  EnvNames.emptyPollSeconds,
  EnvNames.attentionGraceSeconds,
  EnvNames.sweepStoresPerRun,
  EnvNames.storeCacheSeconds,
  EnvNames.logLevel,
  // Retention (issue #10): tests and local mode shorten them; a deployment keeps SQS's own ages.
  EnvNames.expiryAgeSeconds,
  EnvNames.refreshAgeSeconds,
  EnvNames.refreshCopyDelaySeconds,
  EnvNames.refreshBatchesPerRun,
  // Store priority on AWS: set on the reconciler by its construct (loans on or off); unset (local mode), no caps.
  EnvNames.levelFloors,
  EnvNames.levelMappings,
  EnvNames.levelLoans,
];

/** The name the runtime gives Powertools (FUNCTIONS[fn].serviceName), so logs and metrics agree with the environment. */
export const serviceNameOf = (fn: FunctionName): string => FUNCTIONS[fn].serviceName;

/** Set on every function: Powertools reads them itself, and stack traces should point at the TypeScript. */
const commonEnvironment = (fn: FunctionName): Record<string, string> => ({
  [EnvNames.serviceName]: serviceNameOf(fn),
  [EnvNames.metricsNamespace]: METRICS_NAMESPACE,
  NODE_OPTIONS: '--enable-source-maps',
});

/** The environment of function `fn`: the names FUNCTIONS[fn].env lists that are known at deploy time. */
export const functionEnvironment = (fn: FunctionName, known: DeployEnvironment): Record<string, string> => {
  for (const name of NEVER_DEPLOYED) {
    if (known[name] !== undefined)
      throw new InvalidPropError(`${name} must not be set on a deployed function`);
  }
  const env: Record<string, string> = {};
  for (const name of FUNCTIONS[fn].env as readonly EnvName[]) {
    if (NEVER_DEPLOYED.includes(name)) continue;
    const value = known[name];
    if (value !== undefined) env[name] = value;
    else if (!RUNTIME_DEFAULTED.includes(name)) {
      // Fail synth rather than the function's first cold start after a deployment.
      throw new InvalidPropError(`the ${fn} function needs ${name}, which the stack does not provide`);
    }
  }
  return { ...env, ...commonEnvironment(fn) };
};

/**
 * Optional runtime tuning. Unset values fall back to the runtime's defaults (lambdas/config/runtime-config.ts),
 * which also range-checks every value at cold start.
 */
export interface RuntimeSettings {
  /**
   * Per-call marketplace timeout. Capped at MAX_MARKETPLACE_TIMEOUT_MS because the worker's Lambda timeout
   * and its lease are sized for that ceiling.
   * @default - the runtime default (DEFAULT_MARKETPLACE_TIMEOUT_MS)
   */
  readonly marketplaceTimeoutMs?: number;
  /** Long-poll wait that decides a store queue is empty. @default - the runtime default */
  readonly emptyPollSeconds?: number;
  /** How long the reconciler waits before treating an attention as lost. @default - the runtime default */
  readonly attentionGraceSeconds?: number;
  /** Stores the reconciler's slow full sweep checks per run. @default - the runtime default */
  readonly sweepStoresPerRun?: number;
  /** How long ingest caches store records. @default - the runtime default */
  readonly storeCacheSeconds?: number;
}

/** Upper bounds here only guard the stack's own arithmetic; the runtime schema owns the exact ranges. */
export const runtimeSettingsEnvironment = (settings: RuntimeSettings = {}): DeployEnvironment => {
  const entries: [keyof RuntimeSettings, EnvName, number][] = [
    ['marketplaceTimeoutMs', EnvNames.marketplaceTimeoutMs, MAX_MARKETPLACE_TIMEOUT_MS],
    ['emptyPollSeconds', EnvNames.emptyPollSeconds, Number.MAX_SAFE_INTEGER],
    ['attentionGraceSeconds', EnvNames.attentionGraceSeconds, Number.MAX_SAFE_INTEGER],
    ['sweepStoresPerRun', EnvNames.sweepStoresPerRun, Number.MAX_SAFE_INTEGER],
    ['storeCacheSeconds', EnvNames.storeCacheSeconds, Number.MAX_SAFE_INTEGER],
  ];
  const env: DeployEnvironment = {};
  for (const [prop, name, max] of entries) {
    const value = settings[prop];
    if (value !== undefined)
      env[name] = String(requireIntegerInRange(`runtimeSettings.${prop}`, value, 0, max));
  }
  return env;
};
