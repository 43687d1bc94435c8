import type { MarketLimit } from '../core/adaptive-rate.js';
import type { DeliveryOutcome, DeliveryRequest, Marketplace } from '../core/ports.js';
import { traceHeaderFor } from '../core/trace-header.js';
import { traceMarketplaceCall, type MarketplaceCallTracer } from './tracing.js';

/** IMF-fixdate, the HTTP-date form senders must use (RFC 9110 §5.6.7); Date.parse alone accepts "1.5". */
const HTTP_DATE = /^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/;

/** Retry-After is delta-seconds or an HTTP date (RFC 9110); anything else is ignored. */
export const parseRetryAfter = (value: string | null, now: number): number | undefined => {
  const trimmed = value?.trim() ?? '';
  if (/^\d+$/.test(trimmed)) return Number(trimmed);
  if (!HTTP_DATE.test(trimmed)) return undefined;
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - now) / 1000));
};

const number = (value: string | undefined | null): number | undefined => {
  const trimmed = value?.trim() ?? '';
  if (!/^\d+(\.\d+)?$/.test(trimmed)) return undefined;
  return Number(trimmed);
};

/** The per-second rate of quota-policy items `N;w=S` (N requests per S seconds), the strictest one. */
const policyRate = (value: string | null): number | undefined => {
  let strictest: number | undefined;
  for (const item of (value ?? '').split(',')) {
    const [head, ...params] = item.split(';').map((part) => part.trim());
    const window = number(params.find((p) => p.startsWith('w='))?.slice(2));
    // The draft's later form names the quota `q=N` after a policy name; the earlier one leads with N.
    const quota = number(params.find((p) => p.startsWith('q='))?.slice(2)) ?? number(head);
    if (window === undefined || quota === undefined || window <= 0) continue;
    const rate = quota / window;
    if (strictest === undefined || rate < strictest) strictest = rate;
  }
  return strictest;
};

/** The first item of a header that may list several (`0, 3`), as the draft's earlier forms allow. */
const first = (value: string | null): string | undefined => value?.split(',')[0]?.split(';')[0];

/**
 * A `RateLimit-Reset` above this is an epoch time (another API's convention, e.g. `X-RateLimit-Reset`), not the
 * draft's seconds from now (it would be 31 years): taken as the seconds from now to that time.
 */
export const EPOCH_RESET_ABOVE = 1_000_000_000;

/** `RateLimit-Remaining` and `-Reset`: calls left (a count gone negative is none) and seconds to the reset. */
const quotaOf = (
  headers: { get(name: string): string | null },
  now: number,
): Pick<MarketLimit, 'remaining' | 'resetSeconds'> => {
  const left = first(headers.get('ratelimit-remaining'))?.trim();
  const remaining = left !== undefined && /^-\d+(\.\d+)?$/.test(left) ? 0 : number(left);
  const reset = number(first(headers.get('ratelimit-reset')));
  const resetSeconds =
    reset !== undefined && reset > EPOCH_RESET_ABOVE ? Math.max(0, Math.ceil(reset - now / 1000)) : reset;
  return {
    ...(remaining === undefined ? {} : { remaining }),
    ...(resetSeconds === undefined ? {} : { resetSeconds }),
  };
};

/**
 * The marketplace's own limit for the store, from its answer's headers: `x-amzn-RateLimit-Limit` (requests per
 * second), or the IETF draft's `RateLimit-Limit` (requests per window; the window from its quota policies
 * `N;w=S` or `RateLimit-Policy`; else taken as one second, and the count kept as `perWindow` so the store can
 * learn the window from `RateLimit-Reset`); with either, `RateLimit-Remaining` and `RateLimit-Reset`.
 * Undefined when the answer carries no limit (or none that parses).
 */
export const parseMarketLimit = (
  headers: { get(name: string): string | null },
  now: number = Date.now(),
): MarketLimit | undefined => {
  const amazon = number(headers.get('x-amzn-ratelimit-limit'));
  if (amazon !== undefined && amazon > 0) return { perSecond: amazon, ...quotaOf(headers, now) };
  const limitHeader = headers.get('ratelimit-limit');
  const limit = number(first(limitHeader));
  if (limit === undefined || limit <= 0) return undefined;
  const named = policyRate(limitHeader) ?? policyRate(headers.get('ratelimit-policy'));
  return {
    perSecond: named ?? limit,
    ...(named === undefined ? { perWindow: limit } : {}),
    ...quotaOf(headers, now),
  };
};

/** Contract classification: 2xx done, 429 throttled, 5xx/408/timeout/connection transient, other 4xx permanent. */
export const classify = (status: number, retryAfter: string | null, now: number): DeliveryOutcome => {
  if (status >= 200 && status < 300) return { kind: 'ok', status };
  if (status === 429) {
    const seconds = parseRetryAfter(retryAfter, now);
    return { kind: 'throttled', status, ...(seconds === undefined ? {} : { retryAfterSeconds: seconds }) };
  }
  if (status >= 500 || status === 408)
    return { kind: 'transient', status, error: `marketplace answered ${status}` };
  return { kind: 'permanent', status, error: `marketplace answered ${status}` };
};

/**
 * Delivers tasks over HTTP: POST {base}/{marketplace}/stores/{storeId}/tasks with the Idempotency-Key header,
 * and `X-Amzn-Trace-Id: Root={the task's origin trace}` when ingest recorded one (issue #12), so a traced
 * marketplace joins the trace of the request that submitted the task.
 */
export class HttpMarketplace implements Marketplace {
  private readonly base: string;
  constructor(
    baseUrl: string,
    private readonly timeoutMs: number,
    private readonly fetchImpl: typeof fetch = fetch,
    private readonly traceCall: MarketplaceCallTracer = traceMarketplaceCall,
  ) {
    this.base = baseUrl.replace(/\/+$/, '');
  }

  async deliver(request: DeliveryRequest): Promise<DeliveryOutcome> {
    const url = `${this.base}/${encodeURIComponent(request.marketplace)}/stores/${encodeURIComponent(request.storeId)}/tasks`;
    try {
      const { result: response } = await this.traceCall(
        url,
        {
          storeId: request.storeId,
          eventId: request.body.eventId,
          ...(request.traceId === undefined ? {} : { originTraceId: request.traceId }),
        },
        async () => {
          const answer = await this.fetchImpl(url, {
            method: 'POST',
            headers: {
              'content-type': 'application/json',
              'Idempotency-Key': request.idempotencyKey,
              ...(request.traceId === undefined
                ? {}
                : { 'X-Amzn-Trace-Id': traceHeaderFor(request.traceId) }),
            },
            body: JSON.stringify(request.body),
            signal: AbortSignal.timeout(this.timeoutMs),
          });
          // Drain the body so the connection returns to the keep-alive pool.
          await answer.arrayBuffer().catch(() => undefined);
          return { status: answer.status, result: answer };
        },
      );
      const now = Date.now();
      const outcome = classify(response.status, response.headers.get('retry-after'), now);
      const limit = parseMarketLimit(response.headers, now);
      if (limit === undefined) return outcome;
      // A 429 without Retry-After that says the window's quota is spent (or says nothing of what is left) waits
      // for its reset, in whole seconds (an SQS delay is whole); a 429 with calls left is some other limit's.
      if (
        outcome.kind === 'throttled' &&
        outcome.retryAfterSeconds === undefined &&
        limit.resetSeconds !== undefined &&
        (limit.remaining === undefined || limit.remaining <= 0)
      )
        return { ...outcome, retryAfterSeconds: Math.ceil(limit.resetSeconds), limit };
      return { ...outcome, limit };
    } catch (error) {
      const name = (error as Error).name;
      const reason =
        name === 'TimeoutError' || name === 'AbortError'
          ? `timed out after ${this.timeoutMs} ms`
          : `connection failed: ${(error as Error).message}`;
      return { kind: 'transient', error: reason };
    }
  }
}
