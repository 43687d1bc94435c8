import type { RateRules } from '../lambdas/core/adaptive-rate.js';
import type { WatchRules } from '../lambdas/core/store-watch.js';
import type { BlockRules } from '../lambdas/core/rate.js';
import type { RestRules } from '../lambdas/core/slice-receive.js';
import type { WorkerDeps } from '../lambdas/core/attention.js';
import type { CampaignBook } from '../lambdas/core/campaigns.js';
import type { HttpRequest, HttpResponse } from '../lambdas/core/http.js';
import type { IngestDeps } from '../lambdas/core/ingest.js';
import type { AttentionMessage } from '../lambdas/core/messages.js';
import type {
  Clock,
  DeliveryLog,
  DispatchState,
  Marketplace,
  StoreRegistry,
  TaskQueues,
} from '../lambdas/core/ports.js';
import type { ReconcilerDeps } from '../lambdas/core/reconcile.js';
import type { ActorKind } from './scheduler.js';

/** The protocol pieces a variant may replace or wrap; the simulation itself never changes. */
export interface Variant {
  name: string;
  /** The invariant this broken variant is meant to violate. */
  breaks: number;
  description: string;
  /** Wraps the dispatch state inside one operation (atomic), as seen by one kind of actor. */
  dispatch?: (inner: DispatchState, kind: ActorKind) => DispatchState;
  /** Wraps an actor's task queues port (each call still one scheduled operation). */
  tasks?: (inner: TaskQueues, kind: ActorKind) => TaskQueues;
  marketplace?: (inner: Marketplace) => Marketplace;
  deliveries?: (inner: DeliveryLog) => DeliveryLog;
  stores?: (inner: StoreRegistry, kind: ActorKind) => StoreRegistry;
  /** Wraps the campaign lists a worker reads. */
  campaigns?: (inner: CampaignBook) => CampaignBook;
  clock?: (inner: Clock, kind: ActorKind) => Clock;
  /** Replaces the ingest use case (`batch`: the batch route). */
  submit?: (deps: IngestDeps, request: HttpRequest, batch: boolean) => Promise<HttpResponse>;
  handleAttention?: (deps: WorkerDeps, message: AttentionMessage) => Promise<unknown>;
  /**
   * How one invocation runs its records' handlers (each a thunk): the worker handler's batch processor
   * runs them concurrently (`Promise.allSettled` of all at once).
   */
  runBatch?: (records: readonly (() => Promise<unknown>)[]) => Promise<PromiseSettledResult<unknown>[]>;
  reconcile?: (deps: ReconcilerDeps) => Promise<unknown>;
  /** Replaces the adaptive rate's rules (the marketplace's own limits) the workers run. */
  rateRules?: RateRules;
  /** Replaces the shared pacer's block arithmetic (one write reserving several rate instants). */
  blockRules?: BlockRules;
  /** Replaces how a slice ends with its empty check's other long poll still running (lambdas/core/slice-receive.ts). */
  restRules?: RestRules;
  /** Replaces how a slice re-reads its store (lambdas/core/store-watch.ts). */
  watchRules?: WatchRules;
}

/** Replaces one method of an object, keeping the others (bound to it). */
export const override = <T extends object, K extends keyof T>(inner: T, key: K, replacement: T[K]): T =>
  new Proxy(inner, {
    get: (target, property) => {
      if (property === key) return replacement;
      const value = (target as Record<PropertyKey, unknown>)[property];
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
