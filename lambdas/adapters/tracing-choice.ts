/**
 * What a process that does not trace uses in place of Powertools' tracer, apart from the module that loads it
 * (`tracing.ts` loads it with a top-level `await import`, which Stryker cannot instrument). Whether a process
 * traces is the configuration's (`runtime-config.ts` `tracingWanted`).
 */
import type { Tracer } from '@aws-lambda-powertools/tracer';

/** What the adapters use of Powertools' tracer. */
export type ProcessTracer = Pick<Tracer, 'isTracingEnabled' | 'getSegment' | 'captureAWSv3Client'>;

/** A process that does not trace: clients untouched, no segment. */
export const NOT_TRACING: ProcessTracer = {
  isTracingEnabled: () => false,
  getSegment: () => undefined,
  captureAWSv3Client: <T>(client: T): T => client,
};
