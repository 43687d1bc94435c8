import type { DeliveryOutcome, DeliveryRequest, Marketplace } from '../core/ports.js';

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

/** Delivers tasks over HTTP: POST {base}/{marketplace}/stores/{storeId}/tasks with the Idempotency-Key header. */
export class HttpMarketplace implements Marketplace {
  private readonly base: string;
  constructor(
    baseUrl: string,
    private readonly timeoutMs: number,
    private readonly fetchImpl: typeof fetch = fetch,
  ) {
    this.base = baseUrl.replace(/\/+$/, '');
  }

  async deliver(request: DeliveryRequest): Promise<DeliveryOutcome> {
    const url = `${this.base}/${encodeURIComponent(request.marketplace)}/stores/${encodeURIComponent(request.storeId)}/tasks`;
    try {
      const response = await this.fetchImpl(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'Idempotency-Key': request.idempotencyKey },
        body: JSON.stringify(request.body),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      // Drain the body so the connection returns to the keep-alive pool.
      await response.arrayBuffer().catch(() => undefined);
      return classify(response.status, response.headers.get('retry-after'), Date.now());
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
