import { deliveryKey } from '../lambdas/core/names.js';
import type { DeliveryOutcome, Marketplace } from '../lambdas/core/ports.js';
import { MARKETPLACE_TIMEOUT_MS } from './constants.js';
import type { SimContext } from './context.js';
import type { Actor } from './scheduler.js';
import type { KeyCall } from './world-view.js';
import { MarketLimitModel } from './model-market-limit.js';
import { SimMarketplace } from './sim-marketplace.js';

/**
 * The marketplace as the worker calls it: each call one scheduled operation whose outcome is drawn per
 * seed (2xx, 5xx, 429 with Retry-After, 4xx, timeouts that may still apply), reported to the checks as
 * it starts and as its effect lands.
 */
export class MarketplaceModel {
  readonly server = new SimMarketplace();
  /** Every call per Idempotency-Key, raw (before the marketplace deduplicates them). */
  private readonly byKey = new Map<string, KeyCall[]>();
  private readonly limits = new MarketLimitModel();

  constructor(private readonly ctx: SimContext) {}

  portFor(actor: Actor): Marketplace {
    const { ctx } = this;
    const port: Marketplace = {
      deliver: (request) => {
        const storeId = request.storeId;
        const planned = this.planOutcome();
        const plan = this.limited(storeId, this.failing(storeId, request.body.eventId, planned) ?? planned);
        const key = request.idempotencyKey;
        const keyCalls = this.byKey.get(key) ?? [];
        this.byKey.set(key, keyCalls);
        const call: KeyCall = { actor, state: 'inflight', succeeded: false, confirmed: false };
        keyCalls.push(call);
        const inFlight = this.server.start(storeId);
        ctx.checks.callStarted(actor, storeId, inFlight, keyCalls);
        ctx.checks.taskCallStarted(storeId, request.body.eventId);
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
            const outcome = plan.outcome;
            if (outcome.kind === 'ok') call.okAt = ctx.now;
            if (outcome.kind === 'throttled') actor.throttled = true;
            if (outcome.kind === 'throttled')
              ctx.checks.throttled(
                actor,
                storeId,
                request.body.eventId,
                ctx.now + (outcome.retryAfterSeconds ?? 0) * 1000,
              );
            // The window's quota spent (`RateLimit-Remaining: 0`): no call of the store until its reset.
            const quota = outcome.limit;
            if (quota?.remaining === 0 && quota.resetSeconds !== undefined)
              ctx.checks.quotaSpent(actor, storeId, ctx.now + quota.resetSeconds * 1000);
            call.state =
              outcome.kind === 'ok'
                ? 'ok'
                : outcome.kind === 'transient' && outcome.error === 'timeout'
                  ? 'unknown'
                  : 'failed';
            if (plan.serverApplies) {
              call.succeeded = true;
              const effect = this.server.succeed(request);
              const { entityId, version } = request.body;
              if (effect && entityId !== undefined && version !== undefined)
                ctx.checks.versionApplied(storeId, entityId, version);
              ctx.checks.callSucceeded(key, keyCalls);
              ctx.checks.effectApplied(deliveryKey(request.storeId, request.body.eventId));
            }
            return plan.outcome;
          },
          (applied) => {
            // The caller died during the call: whatever the marketplace did, it never learns it.
            call.state = 'dropped';
            if (!applied) end();
          },
        );
      },
    };
    return ctx.variant?.marketplace ? ctx.variant.marketplace(port) : port;
  }

  /** The caller's settle('delivered') for this key landed: its success is on record. */
  confirmed(actor: Actor, key: string): void {
    const calls = this.byKey.get(key) ?? [];
    for (let i = calls.length - 1; i >= 0; i--) {
      const call = calls[i] as KeyCall;
      if (call.actor === actor && call.state === 'ok') {
        call.confirmed = true;
        return;
      }
    }
  }

  /** The caller's settle('delivered') for this key failed and did not land (sim/model-errors.ts). */
  settleLost(actor: Actor, key: string): void {
    const calls = this.byKey.get(key) ?? [];
    for (let i = calls.length - 1; i >= 0; i--) {
      const call = calls[i] as KeyCall;
      if (call.actor === actor && call.state === 'ok') {
        call.settleLost = true;
        return;
      }
    }
  }

  /**
   * A task the marketplace keeps failing while faults run (`StoreSpec.failing`): its planned answer becomes a 503,
   * not applied (the store's own limit still counts the call and may answer 429 instead, with its headers).
   */
  private failing(
    storeId: string,
    eventId: string,
    planned: ReturnType<MarketplaceModel['planOutcome']>,
  ): ReturnType<MarketplaceModel['planOutcome']> | undefined {
    const failing = this.ctx.scenario.stores.find((s) => s.storeId === storeId)?.failing;
    if (!this.ctx.faultsOn || failing?.has(eventId) !== true) return undefined;
    return {
      ...planned,
      outcome: { kind: 'transient', status: 503, error: '503 (this task fails while faults run)' },
      serverApplies: false,
    };
  }

  /**
   * The store's own marketplace limit, while faults run (lifted after, so every run drains in its time): a
   * call above it is answered 429 instead of its planned outcome, and with headers every answer carries it.
   */
  private limited(
    storeId: string,
    plan: ReturnType<MarketplaceModel['planOutcome']>,
  ): ReturnType<MarketplaceModel['planOutcome']> {
    const spec = this.ctx.scenario.stores.find((s) => s.storeId === storeId)?.marketLimit;
    if (!spec || !this.ctx.faultsOn) return plan;
    const outcome = this.limits.apply(storeId, spec, this.ctx.now, plan.outcome);
    return outcome.kind === plan.outcome.kind
      ? { ...plan, outcome }
      : { ...plan, outcome, serverApplies: false };
  }

  private planOutcome(): {
    outcome: DeliveryOutcome;
    latencyMs: number;
    serverApplies: boolean;
  } {
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
