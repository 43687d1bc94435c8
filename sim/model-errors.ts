import { CORE_FIXES } from './constants.js';
import type { SimContext } from './context.js';
import { Rng } from './rng.js';
import type { Actor } from './scheduler.js';

/** Per-call probabilities of a hard error, one drawn per seed (0 in half the seeds: those run as before). */
const RATES = [0.002, 0.005, 0.01, 0.02] as const;

/** An SDK error as the adapters see one after the SDK's own retries gave up (5xx, throttling). */
export class InjectedAwsError extends Error {
  constructor(
    readonly operation: string,
    readonly applied: boolean,
  ) {
    super(`${operation}: ServiceUnavailable (injected${applied ? ', after the request applied' : ''})`);
    this.name = 'ServiceUnavailable';
  }
}

/**
 * Hard SQS/DynamoDB errors: a port call of any actor (ingest, worker, reconciler, operator) that rejects as
 * the SDK would, either without taking effect (the request never applied) or after it (applied, the response
 * lost) — half each. Drawn on a stream of their own, so a seed without errors keeps its interleavings, and
 * only while faults run. Ports are wrapped outside the scheduled operation: an error after the effect is the
 * operation applied (its hooks ran: leases, confirmations) and then the caller told it failed.
 */
export class HardErrors {
  readonly rate: number;
  /** Reconciler runs that met an error (the stranding bound counts them like crashed runs). */
  reconcilerRunsHit = 0;
  private readonly rng: Rng;
  private readonly hitRuns = new Set<number>();

  /** Whether this reconciler run met a hard error. */
  hitRun(actorId: number): boolean {
    return this.hitRuns.has(actorId);
  }

  constructor(
    private readonly ctx: SimContext,
    /** A settle('delivered') failed without landing: the call's success never reached the record. */
    private readonly onSettleLost: (actor: Actor, storeId: string, eventId: string) => void,
  ) {
    this.rng = new Rng(ctx.scenario.seed ^ 0xe4404);
    this.rate = this.rng.chance(0.5) ? this.rng.pick(RATES) : 0;
  }

  /** `port` with each method failing now and then; the port itself when this seed injects no error. */
  wrap<T extends object>(actor: Actor, prefix: string, port: T): T {
    if (this.rate === 0) return port;
    return new Proxy(port, {
      get: (inner, property) => {
        const method = (inner as Record<PropertyKey, unknown>)[property];
        if (typeof method !== 'function') return method;
        const name = `${prefix}.${String(property)}`;
        return (...args: unknown[]) => {
          const call = () => (method as (...a: unknown[]) => Promise<unknown>).apply(inner, args);
          if (!this.ctx.faultsOn || !this.rng.chance(this.rate)) return call();
          if (actor.throttled && !CORE_FIXES.sliceErrorKeepsRetryAfter) return call();
          return this.fail(actor, name, args, call);
        };
      },
    });
  }

  private fail(actor: Actor, name: string, args: unknown[], call: () => Promise<unknown>): Promise<unknown> {
    const { ctx } = this;
    const applied = this.rng.chance(0.5);
    const error = new InjectedAwsError(name, applied);
    ctx.stats.hardErrors++;
    if (actor.kind === 'reconciler' && !this.hitRuns.has(actor.id)) {
      this.hitRuns.add(actor.id);
      this.reconcilerRunsHit++;
    }
    if (applied) {
      const stalledBefore = actor.longStallAt;
      const pending = call();
      // A receive that stalled past the lease margin (a zombie) gets no lost answer: CORE_FIXES.failedReceiveGuarded.
      if (name === 'sqs.receive' && actor.longStallAt !== stalledBefore && !CORE_FIXES.failedReceiveGuarded) {
        ctx.stats.hardErrors--;
        return pending;
      }
      ctx.stats.hardErrorsApplied++;
      return pending.then(() => {
        if (ctx.sched.tracing) ctx.sched.log(`${actor.name}   ↳ ${error.message}`);
        throw error;
      });
    }
    if (name === 'deliveries.settle' && (args[3] as { status?: string }).status === 'delivered')
      this.onSettleLost(actor, args[0] as string, args[1] as string);
    // The batch's delivered settles (one BatchWriteItem): each of its calls' successes did not reach its record.
    if (name === 'deliveries.settleDelivered')
      for (const settle of args[0] as { storeId: string; eventId: string }[])
        this.onSettleLost(actor, settle.storeId, settle.eventId);
    return ctx.sched.call(actor, `${name} ✗`, this.rng.int(1, 20), () => {
      throw error;
    });
  }
}
