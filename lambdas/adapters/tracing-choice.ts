/**
 * Whether a process traces, apart from loading the tracer (`tracing.ts` loads Powertools' with a top-level
 * `await import`, which keeps its X-Ray SDK out of processes that do not trace).
 */
import type { Tracer } from '@aws-lambda-powertools/tracer';
import { EnvNames } from '../config/env-names.js';

/** What the adapters use of Powertools' tracer. */
export type ProcessTracer = Pick<Tracer, 'isTracingEnabled' | 'getSegment' | 'captureAWSv3Client'>;

/**
 * Whether this process may trace: on Lambda (where Powertools traces at all), unless POWERTOOLS_TRACE_ENABLED is
 * false (the stack sets it so with `-c tracing=false`).
 */
export const tracingWanted = (env: NodeJS.ProcessEnv): boolean =>
  env['AWS_LAMBDA_FUNCTION_NAME'] !== undefined && env[EnvNames.traceEnabled] !== 'false';

/** A process that does not trace: clients untouched, no segment. */
export const NOT_TRACING: ProcessTracer = {
  isTracingEnabled: () => false,
  getSegment: () => undefined,
  captureAWSv3Client: <T>(client: T): T => client,
};
