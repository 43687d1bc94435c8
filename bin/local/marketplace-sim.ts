import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MarketplaceLimit, type MarketplaceLimitOptions } from './marketplace-limit.js';

/**
 * A marketplace on loopback that speaks the contract's delivery protocol. Local mode uses it when
 * MARKETPLACE_BASE_URL is unset; the tests use it to count effects and measure per-store concurrency.
 */
export interface MarketplaceCall {
  marketplace: string;
  storeId: string;
  idempotencyKey: string | undefined;
  /** The X-Amzn-Trace-Id the worker forwarded: the trace of the request that submitted the task. */
  traceHeader?: string;
  body: unknown;
  startedAt: number;
  endedAt: number;
  status: number;
}

export interface SimulatedResponse {
  status: number;
  headers?: Record<string, string>;
  /** Extra latency for this call (ms). */
  delayMs?: number;
  /** Never answer (a hung marketplace); the connection is closed when the simulator stops. */
  hang?: boolean;
}

export interface MarketplaceSimOptions {
  port?: number;
  latencyMs?: number;
  /** Share of calls answered 500 (transient). */
  errorRate?: number;
  /** Share of calls answered 429 with Retry-After: 1. */
  throttleRate?: number;
  /** Decide a call's answer yourself (tests); undefined falls back to the rates above. */
  respond?: (call: {
    storeId: string;
    idempotencyKey: string | undefined;
    body: unknown;
  }) => SimulatedResponse | undefined;
  /** Keep at most this many calls (oldest dropped). */
  maxRecorded?: number;
  /** The marketplace's own per-store rate limit (429 above it), with or without rate-limit headers. */
  limit?: MarketplaceLimitOptions;
}

export interface MarketplaceSim {
  url: string;
  calls: MarketplaceCall[];
  /** Highest number of simultaneous calls seen per store. */
  maxConcurrency: Map<string, number>;
  /** Calls answered 2xx per idempotency key (raw calls, duplicates included). */
  successes: Map<string, number>;
  /**
   * Effects applied per idempotency key. Like real marketplace APIs, the simulator honours
   * Idempotency-Key: a repeated successful call is answered from its first result and applies nothing.
   */
  effects: Map<string, number>;
  totals: { calls: number; ok: number; throttled: number; failed: number };
  /** The marketplace's own limit, when configured (`limit.setPerSecond` changes it mid-run). */
  limit: MarketplaceLimit | undefined;
  /** Replace the answer policy while running (tests); undefined restores the configured rates. */
  setResponder(respond: MarketplaceSimOptions['respond']): void;
  stop(): Promise<void>;
}

const PATH = /^\/([^/]+)\/stores\/([^/]+)\/tasks$/;

const readBody = (req: IncomingMessage): Promise<string> =>
  new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });

export const startMarketplaceSim = async (options: MarketplaceSimOptions = {}): Promise<MarketplaceSim> => {
  const calls: MarketplaceCall[] = [];
  const maxConcurrency = new Map<string, number>();
  const inFlight = new Map<string, number>();
  const successes = new Map<string, number>();
  const effects = new Map<string, number>();
  const totals = { calls: 0, ok: 0, throttled: 0, failed: 0 };
  const hung = new Set<ServerResponse>();
  const maxRecorded = options.maxRecorded ?? 100_000;
  let respond = options.respond;
  const limit = options.limit ? new MarketplaceLimit(options.limit) : undefined;

  const server: Server = createServer((req, res) => {
    void (async () => {
      const match = req.method === 'POST' ? PATH.exec(req.url ?? '') : null;
      if (!match) {
        res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found"}');
        return;
      }
      const marketplace = decodeURIComponent(match[1] ?? '');
      const storeId = decodeURIComponent(match[2] ?? '');
      const idempotencyKey = req.headers['idempotency-key'] as string | undefined;
      const traceHeader = req.headers['x-amzn-trace-id'];
      const startedAt = Date.now();
      const now = (inFlight.get(storeId) ?? 0) + 1;
      inFlight.set(storeId, now);
      maxConcurrency.set(storeId, Math.max(maxConcurrency.get(storeId) ?? 0, now));
      totals.calls++;
      let body: unknown;
      try {
        body = JSON.parse(await readBody(req));
      } catch {
        body = undefined;
      }
      const decided = respond?.({ storeId, idempotencyKey, body });
      const roll = Math.random();
      const limited = decided ? undefined : limit?.take(storeId, startedAt);
      const response: SimulatedResponse =
        decided ??
        (limited && !limited.allowed ? { status: 429, headers: limited.headers } : undefined) ??
        (roll < (options.throttleRate ?? 0)
          ? { status: 429, headers: { 'retry-after': '1' } }
          : roll < (options.throttleRate ?? 0) + (options.errorRate ?? 0)
            ? { status: 500 }
            : { status: 200, ...(limited ? { headers: limited.headers } : {}) });
      const delay = (options.latencyMs ?? 0) + (response.delayMs ?? 0);
      if (delay > 0) await new Promise((r) => setTimeout(r, delay));
      inFlight.set(storeId, (inFlight.get(storeId) ?? 1) - 1);
      if (response.hang) {
        hung.add(res);
        return;
      }
      if (response.status >= 200 && response.status < 300) {
        totals.ok++;
        if (idempotencyKey) {
          successes.set(idempotencyKey, (successes.get(idempotencyKey) ?? 0) + 1);
          if (!effects.has(idempotencyKey)) effects.set(idempotencyKey, 1);
        }
      } else if (response.status === 429) totals.throttled++;
      else totals.failed++;
      calls.push({
        marketplace,
        storeId,
        idempotencyKey,
        ...(typeof traceHeader === 'string' ? { traceHeader } : {}),
        body,
        startedAt,
        endedAt: Date.now(),
        status: response.status,
      });
      if (calls.length > maxRecorded) calls.shift();
      res
        .writeHead(response.status, { 'content-type': 'application/json', ...response.headers })
        .end(JSON.stringify(response.status < 300 ? { ok: true } : { error: response.status }));
    })();
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    maxConcurrency,
    successes,
    effects,
    totals,
    limit,
    setResponder: (next) => {
      respond = next;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        for (const res of hung) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
};
