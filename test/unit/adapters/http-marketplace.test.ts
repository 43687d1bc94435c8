import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  classify,
  HttpMarketplace,
  parseMarketLimit,
  parseRetryAfter,
} from '../../../lambdas/adapters/http-marketplace.js';
import {
  tracer,
  traceMarketplaceCall,
  type MarketplaceCallAnnotations,
  type MarketplaceCallTracer,
} from '../../../lambdas/adapters/tracing.js';
import type { DeliveryOutcome, DeliveryRequest } from '../../../lambdas/core/ports.js';
import { T0 } from '../support/fixtures.js';

const request: DeliveryRequest = {
  marketplace: 'acme',
  storeId: 'store-1',
  idempotencyKey: 'store-1:evt-1',
  body: { eventId: 'evt-1', type: 'inventory.update', payload: { sku: 'A', quantity: 3 }, version: 2 },
};

const fakeFetch = (answer: typeof fetch) => vi.fn<typeof fetch>(answer);
const answering = (status: number, headers: Record<string, string> = {}) =>
  fakeFetch(async () => new Response(status === 204 ? null : 'body', { status, headers }));

describe('parseRetryAfter', () => {
  const HTTP_DATE = 'Wed, 21 Oct 2015 07:28:00 GMT';
  const at = Date.parse(HTTP_DATE);

  it.each<[string | null, number, number | undefined]>([
    ['7', T0, 7],
    [' 42 ', T0, 42],
    ['0', T0, 0],
    [HTTP_DATE, at - 30_000, 30],
    [HTTP_DATE, at - 29_500, 30],
    [HTTP_DATE, at + 5_000, 0],
    [null, T0, undefined],
    ['', T0, undefined],
    ['   ', T0, undefined],
    ['soon', T0, undefined],
    // Date.parse would read these as dates in 2001; they are neither delta-seconds nor an HTTP-date.
    ['1.5', T0, undefined],
    ['-5', T0, undefined],
  ])('reads %j at now=%d as %j', (value, now, expected) => {
    expect(parseRetryAfter(value, now)).toBe(expected);
  });
});

describe('classify', () => {
  it.each<[number, DeliveryOutcome['kind']]>([
    [200, 'ok'],
    [201, 'ok'],
    [202, 'ok'],
    [204, 'ok'],
    [299, 'ok'],
    // Not done: fetch follows redirects itself, so a 3xx that reaches here (300, 304) is no delivery; nor a 1xx.
    [199, 'permanent'],
    [300, 'permanent'],
    [304, 'permanent'],
    [429, 'throttled'],
    [408, 'transient'],
    [500, 'transient'],
    [502, 'transient'],
    [503, 'transient'],
    [504, 'transient'],
    [400, 'permanent'],
    [401, 'permanent'],
    [403, 'permanent'],
    [404, 'permanent'],
    [409, 'permanent'],
    [410, 'permanent'],
    [422, 'permanent'],
  ])('%d is %s', (status, kind) => {
    expect(classify(status, null, T0).kind).toBe(kind);
  });

  it('keeps the status and says what the marketplace answered for a transient failure', () => {
    expect(classify(503, null, T0)).toEqual({
      kind: 'transient',
      status: 503,
      error: 'marketplace answered 503',
    });
  });

  it('keeps the status for a permanent failure', () => {
    expect(classify(422, null, T0)).toEqual({
      kind: 'permanent',
      status: 422,
      error: 'marketplace answered 422',
    });
  });

  it('carries Retry-After seconds on a throttle', () => {
    expect(classify(429, '12', T0)).toEqual({ kind: 'throttled', status: 429, retryAfterSeconds: 12 });
  });

  it('carries a Retry-After HTTP date as seconds from now', () => {
    const date = new Date(T0 + 90_000).toUTCString();
    expect(classify(429, date, T0)).toEqual({ kind: 'throttled', status: 429, retryAfterSeconds: 90 });
  });

  it('leaves retryAfterSeconds out when the throttle has no Retry-After', () => {
    expect(classify(429, null, T0)).toEqual({ kind: 'throttled', status: 429 });
  });
});

describe('HttpMarketplace.deliver', () => {
  it('POSTs to {base}/{marketplace}/stores/{storeId}/tasks, trimming the base’s trailing slashes', async () => {
    const fetch = answering(202);
    await new HttpMarketplace('https://mp.example.com/api//', 5_000, fetch).deliver(request);
    expect(fetch.mock.calls[0]?.[0]).toBe('https://mp.example.com/api/acme/stores/store-1/tasks');
  });

  it('encodes the path segments', async () => {
    const fetch = answering(202);
    await new HttpMarketplace('https://mp.example.com', 5_000, fetch).deliver({
      ...request,
      marketplace: 'a/b',
      storeId: 's 1',
    });
    expect(fetch.mock.calls[0]?.[0]).toBe('https://mp.example.com/a%2Fb/stores/s%201/tasks');
  });

  it('sends the contract’s headers and body', async () => {
    const fetch = answering(202);
    await new HttpMarketplace('https://mp.example.com', 5_000, fetch).deliver(request);
    expect(fetch.mock.calls[0]?.[1]).toMatchObject({
      method: 'POST',
      headers: { 'content-type': 'application/json', 'Idempotency-Key': 'store-1:evt-1' },
      body: JSON.stringify(request.body),
    });
  });

  it('bounds the call with an abort signal', async () => {
    const fetch = answering(202);
    await new HttpMarketplace('https://mp.example.com', 5_000, fetch).deliver(request);
    expect(fetch.mock.calls[0]?.[1]?.signal).toBeInstanceOf(AbortSignal);
  });

  it('answers ok for a 2xx', async () => {
    await expect(
      new HttpMarketplace('https://mp.example.com', 5_000, answering(204)).deliver(request),
    ).resolves.toEqual({ kind: 'ok', status: 204 });
  });

  it('reads Retry-After from a 429', async () => {
    await expect(
      new HttpMarketplace('https://mp.example.com', 5_000, answering(429, { 'Retry-After': '30' })).deliver(
        request,
      ),
    ).resolves.toEqual({ kind: 'throttled', status: 429, retryAfterSeconds: 30 });
  });

  it('answers transient for a 5xx', async () => {
    await expect(
      new HttpMarketplace('https://mp.example.com', 5_000, answering(500)).deliver(request),
    ).resolves.toMatchObject({ kind: 'transient', status: 500 });
  });

  it('answers permanent for a 4xx other than 408 and 429', async () => {
    await expect(
      new HttpMarketplace('https://mp.example.com', 5_000, answering(400)).deliver(request),
    ).resolves.toMatchObject({ kind: 'permanent', status: 400 });
  });

  it('drains the response body so the connection can be reused', async () => {
    const response = new Response('{"ok":true}', { status: 200 });
    await new HttpMarketplace(
      'https://mp.example.com',
      5_000,
      fakeFetch(async () => response),
    ).deliver(request);
    expect(response.bodyUsed).toBe(true);
  });

  it.each(['TimeoutError', 'AbortError'])('answers transient for a %s', async (name) => {
    const fetch = fakeFetch(async () => {
      throw new DOMException('The operation was aborted', name);
    });
    await expect(
      new HttpMarketplace('https://mp.example.com', 5_000, fetch).deliver(request),
    ).resolves.toEqual({
      kind: 'transient',
      error: 'timed out after 5000 ms',
    });
  });

  it('answers transient for a connection error', async () => {
    const fetch = fakeFetch(async () => {
      throw new TypeError('fetch failed');
    });
    await expect(
      new HttpMarketplace('https://mp.example.com', 5_000, fetch).deliver(request),
    ).resolves.toEqual({
      kind: 'transient',
      error: 'connection failed: fetch failed',
    });
  });

  it('gives up on a marketplace that does not answer within the timeout', async () => {
    const hanging = fakeFetch(
      (_url, init) =>
        new Promise<Response>((_resolve, reject) => {
          init?.signal?.addEventListener('abort', () => reject(init.signal?.reason));
        }),
    );
    await expect(
      new HttpMarketplace('https://mp.example.com', 20, hanging).deliver(request),
    ).resolves.toEqual({
      kind: 'transient',
      error: 'timed out after 20 ms',
    });
  });
});

describe('parseMarketLimit (adaptive rate)', () => {
  const headers = (entries: Record<string, string>) => new Headers(entries);
  it.each([
    ['x-amzn-RateLimit-Limit per second', { 'x-amzn-RateLimit-Limit': '0.5' }, { perSecond: 0.5 }],
    [
      'IETF draft with the window in RateLimit-Limit',
      { 'RateLimit-Limit': '60, 60;w=10', 'RateLimit-Remaining': '12', 'RateLimit-Reset': '4' },
      { perSecond: 6, remaining: 12, resetSeconds: 4 },
    ],
    [
      'IETF draft with RateLimit-Policy (the strictest quota)',
      { 'RateLimit-Limit': '100', 'RateLimit-Policy': '100;w=60, 10;w=1' },
      { perSecond: 100 / 60 },
    ],
    [
      'the later draft form q=N;w=S',
      { 'RateLimit-Limit': '30', 'RateLimit-Policy': '"burst";q=30;w=10' },
      { perSecond: 3 },
    ],
    [
      'no window stated: per second, the count kept to learn the window',
      { 'RateLimit-Limit': '7' },
      { perSecond: 7, perWindow: 7 },
    ],
  ])('%s', (_name, entries, expected) => {
    // Strict: what the answer did not say is absent, not present as undefined.
    expect(parseMarketLimit(headers(entries))).toStrictEqual(expected);
  });

  it.each([
    [
      'a count gone negative as none left',
      { 'RateLimit-Limit': '5', 'RateLimit-Remaining': '-2', 'RateLimit-Reset': '3' },
      { perSecond: 5, perWindow: 5, remaining: 0, resetSeconds: 3 },
    ],
    [
      'the first of listed values',
      { 'RateLimit-Limit': '5, 50;w=60', 'RateLimit-Remaining': '0, 31', 'RateLimit-Reset': '3, 40' },
      { perSecond: 50 / 60, remaining: 0, resetSeconds: 3 },
    ],
    [
      'Remaining and Reset beside x-amzn-RateLimit-Limit',
      { 'x-amzn-RateLimit-Limit': '2', 'RateLimit-Remaining': '0', 'RateLimit-Reset': '1' },
      { perSecond: 2, remaining: 0, resetSeconds: 1 },
    ],
    [
      'a Reset that is an epoch time, as the seconds to it',
      { 'RateLimit-Limit': '5', 'RateLimit-Remaining': '0', 'RateLimit-Reset': String(T0 / 1000 + 42) },
      { perSecond: 5, perWindow: 5, remaining: 0, resetSeconds: 42 },
    ],
    [
      'a negative count with more digits, or a fraction, as none left',
      { 'RateLimit-Limit': '5', 'RateLimit-Remaining': '-12', 'RateLimit-Reset': '-0.5' },
      { perSecond: 5, perWindow: 5, remaining: 0 },
    ],
    [
      'a negative fraction as none left',
      { 'RateLimit-Limit': '5', 'RateLimit-Remaining': '-0.25' },
      { perSecond: 5, perWindow: 5, remaining: 0 },
    ],
    [
      'a listed negative count followed by a space',
      { 'RateLimit-Limit': '5', 'RateLimit-Remaining': '-2 , 5' },
      { perSecond: 5, perWindow: 5, remaining: 0 },
    ],
    [
      'a count that is not a number as absent',
      { 'RateLimit-Limit': '5', 'RateLimit-Remaining': '-1x', 'RateLimit-Reset': '5-1' },
      { perSecond: 5, perWindow: 5 },
    ],
    [
      'a count with a minus inside as absent',
      { 'RateLimit-Limit': '5', 'RateLimit-Remaining': '5-1' },
      { perSecond: 5, perWindow: 5 },
    ],
    [
      'a Reset of exactly 10⁹ as seconds, not an epoch time',
      { 'RateLimit-Limit': '5', 'RateLimit-Remaining': '0', 'RateLimit-Reset': '1000000000' },
      { perSecond: 5, perWindow: 5, remaining: 0, resetSeconds: 1_000_000_000 },
    ],
    [
      'an epoch Reset already past, as none to wait',
      { 'RateLimit-Limit': '5', 'RateLimit-Remaining': '0', 'RateLimit-Reset': String(T0 / 1000 - 5) },
      { perSecond: 5, perWindow: 5, remaining: 0, resetSeconds: 0 },
    ],
  ])('reads %s', (_name, entries, expected) => {
    expect(parseMarketLimit(headers(entries), T0)).toStrictEqual(expected);
  });

  it.each([
    [{}],
    [{ 'RateLimit-Limit': 'lots' }],
    [{ 'x-amzn-RateLimit-Limit': '0' }],
    [{ 'RateLimit-Limit': '-3' }],
    [{ 'RateLimit-Limit': '0', 'RateLimit-Remaining': '0', 'RateLimit-Reset': '5' }],
  ])('is undefined without a usable limit (%o)', (entries) => {
    expect(parseMarketLimit(headers(entries))).toBeUndefined();
  });

  it('rides on every outcome the adapter returns', async () => {
    const fetchImpl = (async () =>
      new Response('{}', {
        status: 429,
        headers: { 'x-amzn-RateLimit-Limit': '2', 'Retry-After': '3' },
      })) as typeof fetch;
    const outcome = await new HttpMarketplace('http://m', 1000, fetchImpl).deliver({
      marketplace: 'acme',
      storeId: 's1',
      idempotencyKey: 's1:e1',
      body: { eventId: 'e1', type: 'inventory.update', payload: {} },
    });
    expect(outcome).toEqual({
      kind: 'throttled',
      status: 429,
      retryAfterSeconds: 3,
      limit: { perSecond: 2 },
    });
  });

  it.each([
    ['without Retry-After, waits for the window’s reset', {}, 7],
    ['with Retry-After, keeps it', { 'Retry-After': '3' }, 3],
  ])('a 429 with RateLimit-Reset %s', async (_name, extra, seconds) => {
    const quota = { 'RateLimit-Limit': '5', 'RateLimit-Remaining': '0', 'RateLimit-Reset': '7' };
    const outcome = await new HttpMarketplace(
      'https://mp.example.com',
      5_000,
      answering(429, { ...quota, ...extra }),
    ).deliver(request);
    expect(outcome).toEqual({
      kind: 'throttled',
      status: 429,
      retryAfterSeconds: seconds,
      limit: { perSecond: 5, perWindow: 5, remaining: 0, resetSeconds: 7 },
    });
  });

  it.each([
    ['a fractional Reset, rounded up (an SQS delay is whole)', { 'RateLimit-Reset': '2.5' }, 3],
    ['Remaining absent', { 'RateLimit-Remaining': '', 'RateLimit-Reset': '4' }, 4],
  ])('a 429 without Retry-After: %s', async (_name, extra, seconds) => {
    const quota = { 'RateLimit-Limit': '5', 'RateLimit-Remaining': '0', ...extra };
    const entries = Object.fromEntries(Object.entries(quota).filter(([, value]) => value !== ''));
    const outcome = await new HttpMarketplace(
      'https://mp.example.com',
      5_000,
      answering(429, entries),
    ).deliver(request);
    expect(outcome).toMatchObject({ kind: 'throttled', retryAfterSeconds: seconds });
  });

  it('a 429 without Retry-After whose window has calls left is some other limit: its Reset is not waited', async () => {
    const quota = { 'RateLimit-Limit': '5000', 'RateLimit-Remaining': '40', 'RateLimit-Reset': '3600' };
    const outcome = await new HttpMarketplace('https://mp.example.com', 5_000, answering(429, quota)).deliver(
      request,
    );
    expect(outcome).toMatchObject({ kind: 'throttled' });
    expect(outcome).not.toHaveProperty('retryAfterSeconds');
  });

  it.each<[string, number, Record<string, string>, DeliveryOutcome]>([
    ['a 2xx without limit headers carries no limit', 200, {}, { kind: 'ok', status: 200 }],
    ['a bare 429 stays a bare throttle', 429, {}, { kind: 'throttled', status: 429 }],
    [
      'a 429 with a limit but no Reset waits for nothing the headers said',
      429,
      { 'x-amzn-RateLimit-Limit': '2' },
      { kind: 'throttled', status: 429, limit: { perSecond: 2 } },
    ],
  ])('%s', async (_name, status, limitHeaders, expected) => {
    const outcome = await new HttpMarketplace(
      'https://mp.example.com',
      5_000,
      answering(status, limitHeaders),
    ).deliver(request);
    expect(outcome).toStrictEqual(expected);
  });

  it('a 2xx with RateLimit-Reset carries no Retry-After', async () => {
    const quota = { 'RateLimit-Limit': '5', 'RateLimit-Remaining': '0', 'RateLimit-Reset': '7' };
    await expect(
      new HttpMarketplace('https://mp.example.com', 5_000, answering(200, quota)).deliver(request),
    ).resolves.toEqual({
      kind: 'ok',
      status: 200,
      limit: { perSecond: 5, perWindow: 5, remaining: 0, resetSeconds: 7 },
    });
  });
});

describe('HttpMarketplace.deliver: one task’s trace (issue #12)', () => {
  const TRACE_ID = '1-5759e988-bd862e3fe1be46a994272793';
  const traced: DeliveryRequest = { ...request, traceId: TRACE_ID };
  const recordingTracer = () => {
    const seen: { url: string; annotations: MarketplaceCallAnnotations }[] = [];
    const traceCall: MarketplaceCallTracer = async (url, annotations, call) => {
      seen.push({ url, annotations });
      return call();
    };
    return { seen, traceCall };
  };

  it('forwards the task’s origin trace as X-Amzn-Trace-Id, beside the contract’s headers', async () => {
    const fetch = answering(202);
    await new HttpMarketplace('https://mp.example.com', 5_000, fetch).deliver(traced);
    expect(fetch.mock.calls[0]?.[1]?.headers).toEqual({
      'content-type': 'application/json',
      'Idempotency-Key': 'store-1:evt-1',
      'X-Amzn-Trace-Id': `Root=${TRACE_ID}`,
    });
  });

  it('sends only the contract’s headers for a task without a trace', async () => {
    const fetch = answering(202);
    await new HttpMarketplace('https://mp.example.com', 5_000, fetch).deliver(request);
    expect(fetch.mock.calls[0]?.[1]?.headers).toEqual({
      'content-type': 'application/json',
      'Idempotency-Key': 'store-1:evt-1',
    });
  });

  it('records the call annotated with its store, its task and its origin trace', async () => {
    const { seen, traceCall } = recordingTracer();
    await new HttpMarketplace('https://mp.example.com', 5_000, answering(202), traceCall).deliver(traced);
    expect(seen).toEqual([
      {
        url: 'https://mp.example.com/acme/stores/store-1/tasks',
        annotations: { storeId: 'store-1', eventId: 'evt-1', originTraceId: TRACE_ID },
      },
    ]);
  });

  it('annotates a task without an origin trace with its store and task only', async () => {
    const { seen, traceCall } = recordingTracer();
    await new HttpMarketplace('https://mp.example.com', 5_000, answering(202), traceCall).deliver(request);
    expect(seen.map((s) => s.annotations)).toStrictEqual([{ storeId: 'store-1', eventId: 'evt-1' }]);
  });

  it('classifies what the recorded call answered', async () => {
    const { traceCall } = recordingTracer();
    await expect(
      new HttpMarketplace('https://mp.example.com', 5_000, answering(503), traceCall).deliver(traced),
    ).resolves.toEqual({ kind: 'transient', status: 503, error: 'marketplace answered 503' });
  });

  it('answers transient when the recorded call fails to connect', async () => {
    const { traceCall } = recordingTracer();
    const refused = fakeFetch(async () => Promise.reject(new TypeError('fetch failed')));
    await expect(
      new HttpMarketplace('https://mp.example.com', 5_000, refused, traceCall).deliver(traced),
    ).resolves.toEqual({ kind: 'transient', error: 'connection failed: fetch failed' });
  });
});

describe('traceMarketplaceCall', () => {
  const recordingSegment = () => {
    const sub = {
      name: '',
      annotations: {} as Record<string, string>,
      attributes: {} as Record<string, unknown>,
      flags: [] as string[],
      closed: false,
      addAttribute: (key: string, value: unknown) => void (sub.attributes[key] = value),
      addAnnotation: (key: string, value: string) => void (sub.annotations[key] = value),
      addThrottleFlag: () => void sub.flags.push('throttle'),
      addErrorFlag: () => void sub.flags.push('error'),
      addFaultFlag: () => void sub.flags.push('fault'),
      addError: () => void sub.flags.push('exception'),
      close: () => void (sub.closed = true),
    };
    const parent = { addNewSubsegment: (name: string) => ((sub.name = name), sub) };
    vi.spyOn(tracer, 'isTracingEnabled').mockReturnValue(true);
    vi.spyOn(tracer, 'getSegment').mockReturnValue(parent as never);
    return sub;
  };
  afterEach(() => {
    vi.restoreAllMocks();
  });
  const URL_ = 'https://mp.example.com/acme/stores/s/tasks';
  const annotations = { storeId: 's', eventId: 'e', originTraceId: '1-5759e988-bd862e3fe1be46a994272793' };

  it('records the call in a subsegment named for the marketplace host, annotated with its task', async () => {
    const sub = recordingSegment();
    await traceMarketplaceCall(URL_, annotations, async () => ({ status: 202, result: undefined }));
    expect({ name: sub.name, annotations: sub.annotations, closed: sub.closed }).toEqual({
      name: 'mp.example.com',
      annotations,
      closed: true,
    });
  });

  it('records the answer’s status, a 429 as a throttle', async () => {
    const sub = recordingSegment();
    await traceMarketplaceCall(URL_, annotations, async () => ({ status: 429, result: undefined }));
    expect({ http: sub.attributes['http'], flags: sub.flags }).toEqual({
      http: { request: { url: URL_, method: 'POST' }, response: { status: 429 } },
      flags: ['throttle', 'error'],
    });
  });

  it('marks a 5xx as a fault', async () => {
    const sub = recordingSegment();
    await traceMarketplaceCall(URL_, annotations, async () => ({ status: 503, result: undefined }));
    expect(sub.flags).toEqual(['fault']);
  });

  it('closes the subsegment with the error when the call throws', async () => {
    const sub = recordingSegment();
    await expect(
      traceMarketplaceCall(URL_, annotations, async () => Promise.reject(new Error('refused'))),
    ).rejects.toThrow('refused');
    expect({ flags: sub.flags, closed: sub.closed }).toEqual({ flags: ['exception'], closed: true });
  });

  it('just makes the call when tracing is off (outside Lambda)', async () => {
    const call = vi.fn(async () => ({ status: 202, result: 'answer' }));
    await expect(
      traceMarketplaceCall(
        'https://mp.example.com/acme/stores/s/tasks',
        { storeId: 's', eventId: 'e' },
        call,
      ),
    ).resolves.toEqual({ status: 202, result: 'answer' });
  });
});
