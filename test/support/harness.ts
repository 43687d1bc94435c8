import { randomBytes } from 'node:crypto';
import { inject } from 'vitest';
import { startLocalStack, type LocalStack, type LocalStackOptions } from '../../bin/local/local-stack.js';
import type { MarketplaceSimOptions } from '../../bin/local/marketplace-sim.js';
import { DynamoStoreRegistry } from '../../lambdas/adapters/dynamo-store-registry.js';
import { EnvNames } from '../../lambdas/config/env-names.js';
import type { StoreRecord } from '../../lambdas/core/store-model.js';
import { workQueuesOf } from '../../lambdas/core/store-queues.js';
import { queueDepth } from './queues.js';

/**
 * A local stack on the emulators started by the global setup, under a prefix of its own, with the
 * marketplace simulator recording every call. Settings are shortened so recovery paths run in seconds.
 */
export const startTestStack = async (
  options: Partial<LocalStackOptions> & { marketplaceSim?: MarketplaceSimOptions } = {},
): Promise<TestStack> => {
  const stack = await startLocalStack({
    prefix: `t${randomBytes(4).toString('hex')}`,
    endpoints: { dynamo: inject('dynamoEndpoint'), sqs: inject('sqsEndpoint') },
    workerPoolSize: 4,
    reconcileIntervalMs: 1_000,
    marketplaceSim: { latencyMs: 2 },
    log: () => undefined,
    // Tests drive bursts far above a tenant's rate; the throttle has its own test (security.test.ts).
    tenantThrottle: null,
    ...options,
    settings: {
      [EnvNames.attentionGraceSeconds]: '2',
      [EnvNames.emptyPollSeconds]: '1',
      [EnvNames.marketplaceTimeoutMs]: '2000',
      [EnvNames.sweepStoresPerRun]: '100',
      ...options.settings,
    },
  });
  return new TestStack(stack);
};

export interface ApiResponse<T = unknown> {
  status: number;
  body: T;
}

export class TestStack {
  constructor(readonly stack: LocalStack) {}

  get marketplace() {
    if (!this.stack.marketplace) throw new Error('this stack delivers to an external marketplace');
    return this.stack.marketplace;
  }

  async request<T = Record<string, unknown>>(
    method: string,
    path: string,
    opts: { token?: string; body?: unknown; rawBody?: string; headers?: Record<string, string> } = {},
  ): Promise<ApiResponse<T>> {
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.token) headers['authorization'] = `Bearer ${opts.token}`;
    const body = opts.rawBody ?? (opts.body === undefined ? undefined : JSON.stringify(opts.body));
    if (body !== undefined && !headers['content-type']) headers['content-type'] = 'application/json';
    const res = await fetch(`${this.stack.url}${path}`, {
      method,
      headers,
      ...(body === undefined ? {} : { body }),
    });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : undefined) as T };
  }

  admin<T = Record<string, unknown>>(method: string, path: string, body?: unknown): Promise<ApiResponse<T>> {
    return this.request<T>(method, path, {
      token: this.stack.adminToken,
      ...(body === undefined ? {} : { body }),
    });
  }

  async createStore(storeId: string, body: Record<string, unknown>): Promise<Record<string, unknown>> {
    const res = await this.admin('PUT', `/admin/stores/${storeId}`, body);
    if (res.status !== 201 && res.status !== 200)
      throw new Error(`PUT store ${storeId}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  }

  async tokenFor(tenantId: string): Promise<string> {
    const res = await this.admin<{ token: string }>('POST', `/admin/tenants/${tenantId}/tokens`);
    if (res.status !== 201) throw new Error(`token for ${tenantId}: ${res.status}`);
    return res.body.token;
  }

  /** Submits tasks through the batch route, 100 at a time; throws unless every task is accepted. */
  async submitMany(storeId: string, token: string, tasks: Record<string, unknown>[]): Promise<void> {
    for (let i = 0; i < tasks.length; i += 100) {
      const res = await this.request<{ accepted: string[]; rejected: unknown[] }>(
        'POST',
        `/v1/stores/${storeId}/tasks/batch`,
        {
          token,
          body: { tasks: tasks.slice(i, i + 100) },
        },
      );
      if (res.status !== 202 || res.body.rejected.length > 0)
        throw new Error(`batch: ${res.status} ${JSON.stringify(res.body)}`);
    }
  }

  /** The store's record as the registry table holds it (its queue URLs), or undefined. */
  storeRecord(storeId: string): Promise<StoreRecord | undefined> {
    return new DynamoStoreRegistry(this.stack.clients.doc, this.stack.resources.tables.stores).get(storeId);
  }

  /** Messages in the store's work queue: visible, in flight and delayed (exact on fauxqs). */
  /** Messages in the store's work queue and its high-priority queue (visible, in flight, delayed). */
  async backlogOf(storeId: string): Promise<number> {
    const store = await this.storeRecord(storeId);
    let total = 0;
    for (const url of store ? workQueuesOf(store) : ['']) {
      const depth = await queueDepth(this.stack.clients.sqs, url);
      total += depth.visible + depth.inFlight + depth.delayed;
    }
    return total;
  }

  /** Successful marketplace calls for one store. */
  deliveredCount(storeId: string): number {
    return this.marketplace.calls.filter((c) => c.storeId === storeId && c.status < 300).length;
  }

  stop(): Promise<void> {
    return this.stack.stop();
  }
}

export const inventoryTasks = (prefix: string, count: number): Record<string, unknown>[] =>
  Array.from({ length: count }, (_, i) => ({
    eventId: `${prefix}-${i}`,
    type: 'inventory.update',
    payload: { sku: `SKU-${i % 50}`, quantity: i },
  }));

export const waitFor = async (
  what: string,
  predicate: () => boolean | Promise<boolean>,
  timeoutMs = 60_000,
): Promise<void> => {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await predicate()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for: ${what}`);
};

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
