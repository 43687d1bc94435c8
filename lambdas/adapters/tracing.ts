import { processTracingWanted } from '../config/runtime-config.js';
import { NOT_TRACING, type ProcessTracer } from './tracing-choice.js';

/**
 * The process's one X-Ray tracer (Powertools), loaded only where tracing is wanted: its X-Ray SDK turns on
 * `async_hooks` promise-destroy tracking for the whole process when it loads (`cls-hooked`), tracing or not, which
 * cost the local pipeline about a third of its throughput (session 28: 560–600 → 810–830 tasks/s without it).
 * `traced` adds a subsegment per AWS SDK call of a client; the marketplace call gets its own subsegment from
 * `traceMarketplaceCall`, annotated with its task. Powertools' automatic `fetch` instrumentation is off: it would
 * add a second `X-Amzn-Trace-Id` (the worker's trace) to a call that carries its task's origin trace. Where tracing
 * is not wanted (local mode, tests, `-c tracing=false`) `traced` returns the client untouched and
 * `traceMarketplaceCall` just makes the call.
 */
export const tracer: ProcessTracer = processTracingWanted()
  ? new (await import('@aws-lambda-powertools/tracer')).Tracer({ captureHTTPsRequests: false })
  : NOT_TRACING;

/** The client, with each of its calls recorded as an X-Ray subsegment when tracing is on. */
export const traced = <T>(client: T): T => tracer.captureAWSv3Client(client);

/** What the marketplace call's subsegment is searchable by in X-Ray (`annotation.originTraceId = "1-…"`). */
export interface MarketplaceCallAnnotations {
  storeId: string;
  eventId: string;
  /** The trace of the request that submitted the task. */
  originTraceId?: string;
}

/** Records one marketplace call; the same shape as `traceMarketplaceCall`, so tests can pass their own. */
export type MarketplaceCallTracer = <T>(
  url: string,
  annotations: MarketplaceCallAnnotations,
  call: () => Promise<{ status: number; result: T }>,
) => Promise<{ status: number; result: T }>;

/**
 * The call in a subsegment named for the marketplace's host (a remote node on the service map), annotated
 * with its store, its task and its origin trace, with the answer's status (429 throttle, 4xx error, 5xx fault).
 */
export const traceMarketplaceCall: MarketplaceCallTracer = async (url, annotations, call) => {
  if (!tracer.isTracingEnabled()) return call();
  const parent = tracer.getSegment();
  if (!parent) return call();
  const target = new URL(url);
  const subsegment = parent.addNewSubsegment(target.hostname);
  subsegment.addAttribute('namespace', 'remote');
  for (const [key, value] of Object.entries(annotations))
    if (value !== undefined) subsegment.addAnnotation(key, value);
  try {
    const answer = await call();
    subsegment.addAttribute('http', {
      request: { url: `${target.origin}${target.pathname}`, method: 'POST' },
      response: { status: answer.status },
    });
    if (answer.status === 429) subsegment.addThrottleFlag();
    if (answer.status >= 400 && answer.status < 500) subsegment.addErrorFlag();
    else if (answer.status >= 500) subsegment.addFaultFlag();
    return answer;
  } catch (error) {
    subsegment.addError(error as Error, true);
    throw error;
  } finally {
    subsegment.close();
  }
};
