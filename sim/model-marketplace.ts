import { deliveryKey } from '../lambdas/core/names.js';
import type { DeliveryOutcome, Marketplace } from '../lambdas/core/ports.js';
import { MARKETPLACE_TIMEOUT_MS } from './constants.js';
import type { SimContext } from './context.js';
import type { Actor } from './scheduler.js';
import { SimMarketplace } from './sim-marketplace.js';

/**
 * The marketplace as the worker calls it: each call one scheduled operation whose outcome is drawn per
 * seed (2xx, 5xx, 429 with Retry-After, 4xx, timeouts that may still apply), reported to the checks as
 * it starts and as its effect lands.
 */
export class MarketplaceModel {
  readonly server = new SimMarketplace();

  constructor(private readonly ctx: SimContext) {}

  portFor(actor: Actor): Marketplace {
    const { ctx } = this;
    const port: Marketplace = {
      deliver: (request) => {
        const plan = this.planOutcome();
        const storeId = request.storeId;
        const inFlight = this.server.start(storeId);
        ctx.checks.callStarted(actor, storeId, inFlight);
        let ended = false;
        const end = () => {
          if (ended) return;
          ended = true;
          this.server.end(storeId);
        };
        return ctx.sched.call(
          actor,
          ctx.label('marketplace.deliver', [request.idempotencyKey, plan.outcome.kind]),
          plan.latencyMs,
          () => {
            end();
            if (plan.serverApplies) {
              this.server.succeed(request);
              ctx.checks.effectApplied(deliveryKey(request.storeId, request.body.eventId));
            }
            return plan.outcome;
          },
          (applied) => {
            if (!applied) end();
          },
        );
      },
    };
    return ctx.variant?.marketplace ? ctx.variant.marketplace(port) : port;
  }

  private planOutcome(): { outcome: DeliveryOutcome; latencyMs: number; serverApplies: boolean } {
    const { rng } = this.ctx;
    const latencyMs = rng.int(20, 400);
    const f = this.ctx.scenario.faults.marketplace;
    const r = this.ctx.faultsOn ? rng.next() : 1;
    let edge = f.transient;
    if (r < edge)
      return { outcome: { kind: 'transient', status: 503, error: '503' }, latencyMs, serverApplies: false };
    edge += f.throttle;
    if (r < edge)
      return {
        outcome: { kind: 'throttled', status: 429, retryAfterSeconds: rng.int(1, 10) },
        latencyMs,
        serverApplies: false,
      };
    edge += f.permanent;
    if (r < edge)
      return {
        outcome: { kind: 'permanent', status: 400, error: '400 rejected' },
        latencyMs,
        serverApplies: false,
      };
    edge += f.timeout;
    if (r < edge)
      return {
        outcome: { kind: 'transient', error: 'timeout' },
        latencyMs: MARKETPLACE_TIMEOUT_MS,
        // A timed-out request may still have been processed by the marketplace.
        serverApplies: rng.chance(0.5),
      };
    return { outcome: { kind: 'ok', status: 200 }, latencyMs, serverApplies: true };
  }
}
