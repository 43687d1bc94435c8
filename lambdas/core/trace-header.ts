/**
 * One task's trace (issue #12): the X-Ray trace id of the request that submitted it travels in its work
 * message (`traceId`) to the worker, which annotates the marketplace call with it and forwards it to the
 * marketplace as `X-Amzn-Trace-Id: Root=…`. The header comes from outside (an integrator may send one), so
 * only a well-formed trace id is kept; anything else is ignored, never rejected.
 */

/** The HTTP header (lower-cased, as HttpRequest holds headers) and the Lambda variable that carry it. */
export const TRACE_HEADER = 'x-amzn-trace-id';

/** An X-Ray trace id: version 1, 8 hex digits of epoch seconds, 24 hex digits. */
const TRACE_ID = /^1-[0-9a-f]{8}-[0-9a-f]{24}$/;

/** The trace id (`Root`) of an `X-Amzn-Trace-Id` value such as `Root=1-…;Parent=…;Sampled=1`, if well formed. */
export const traceIdOf = (header: string | undefined): string | undefined => {
  if (header === undefined || header.length > 256) return undefined;
  for (const field of header.split(';')) {
    const [key, value] = field.split('=').map((part) => part.trim());
    if (key?.toLowerCase() === 'root' && value !== undefined && TRACE_ID.test(value)) return value;
  }
  return undefined;
};

/** The header the worker forwards to the marketplace: the task's origin trace, for the marketplace's own tracing. */
export const traceHeaderFor = (traceId: string): string => `Root=${traceId}`;
