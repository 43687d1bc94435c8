import type { HttpRequest } from '../lambdas/core/http.js';
import { submitBatch, submitTask, type IngestDeps } from '../lambdas/core/ingest.js';
import { deliveryKey } from '../lambdas/core/names.js';
import type { SimContext } from './context.js';
import { TENANT, type IngestRequest } from './scenario.js';
import type { SimPorts } from './sim-ports.js';
import type { StoreState, TaskTrack } from './world-view.js';

/**
 * Integrators: each request at its time becomes an ingest actor running the real submitTask/submitBatch;
 * a request that fails or crashes is retried (up to three times) with the same eventIds.
 */
export class IngestActors {
  private readonly pending: IngestRequest[];
  private live = 0;

  constructor(
    private readonly ctx: SimContext,
    private readonly ports: SimPorts,
    private readonly stores: ReadonlyMap<string, StoreState>,
    private readonly tasks: ReadonlyMap<string, TaskTrack>,
    requests: IngestRequest[],
    start: number,
  ) {
    this.pending = requests.map((r) => ({ ...r, at: start + r.at }));
  }

  /** When the next request is due, if any. */
  nextAt(): number | undefined {
    return this.pending[0]?.at;
  }

  /** No request left to send and none in progress. */
  done(): boolean {
    return this.pending.length === 0 && this.live === 0;
  }

  fire(): void {
    while (this.pending.length > 0 && (this.pending[0] as IngestRequest).at <= this.ctx.now) {
      this.spawn(this.pending.shift() as IngestRequest);
    }
  }

  private spawn(request: IngestRequest): void {
    const { ctx } = this;
    const actor = ctx.sched.newActor('ingest', `ingest:${request.storeId}`, ctx.skew());
    const state = this.stores.get(request.storeId) as StoreState;
    this.live++;
    const deps: IngestDeps = {
      ...this.ports.common(actor),
      stores: this.ports.stores(actor),
      tasks: this.ports.tasks(actor),
      deliveries: this.ports.deliveries(actor),
    };
    const versioned = state.spec.versioned;
    const task = (eventId: string) => {
      const n = Number(eventId.slice(1));
      // Every fourth task is an order sync (high priority by its type's default): it overtakes the waiting
      // inventory updates (invariant 11).
      const high = n % 4 === 3;
      return {
        eventId,
        ...(high
          ? { type: 'orders.sync', payload: { orderId: `o-${eventId}` } }
          : { type: 'inventory.update', payload: { sku: `sku-${eventId}`, quantity: 1 } }),
        ...(versioned ? { entityId: `ent-${n % 3}`, version: n } : {}),
      };
    };
    const body = request.batch ? { tasks: request.eventIds.map(task) } : task(request.eventIds[0] as string);
    const http: HttpRequest = {
      method: 'POST',
      resource: request.batch ? '/v1/stores/{storeId}/tasks/batch' : '/v1/stores/{storeId}/tasks',
      pathParameters: { storeId: request.storeId },
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      tenantId: TENANT,
      requestId: `req-${actor.id}`,
    };
    const retry = (eventIds = request.eventIds) => {
      if (request.attempt < 3)
        this.pending.push({
          ...request,
          eventIds,
          at: ctx.now + ctx.rng.int(500, 5_000),
          attempt: request.attempt + 1,
        });
      this.pending.sort((a, b) => a.at - b.at);
    };
    actor.onCrash = () => {
      this.live--;
      if (state.untracked.delete(actor.id)) state.orphans.add(actor.id);
      retry();
    };
    const submit = ctx.variant?.submit
      ? ctx.variant.submit(deps, http, request.batch)
      : request.batch
        ? submitBatch(deps, http)
        : submitTask(deps, http);
    submit
      .then(
        (response) => {
          ctx.sched.log(`${actor.name} answered ${response.status}`);
          if (response.status === 202) {
            // A batch answers which tasks it accepted; the integrator posts the others again (a store queue
            // that failed for them: a hard SQS error).
            const accepted = request.batch
              ? (response.body as { accepted: string[] }).accepted
              : request.eventIds;
            const rest = request.eventIds.filter((eventId) => !accepted.includes(eventId));
            if (rest.length > 0) retry(rest);
            for (const eventId of accepted) {
              const track = this.tasks.get(deliveryKey(request.storeId, eventId));
              ctx.checks.accepted(request.storeId, eventId, track);
              if (track) track.accepted = true;
            }
          } else retry();
        },
        (error: unknown) => {
          ctx.sched.log(`${actor.name} failed ${String(error)}`);
          retry();
        },
      )
      .finally(() => {
        if (!actor.crashed) {
          actor.finished = true;
          this.live--;
          // A finished request no longer excuses an untracked backlog: it either bumped enqSeq or never will.
          state.untracked.delete(actor.id);
        }
        ctx.sched.notify();
      });
  }
}
