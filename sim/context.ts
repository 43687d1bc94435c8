import { CLOCK_SKEW_MS, LEASE_MARGIN_MS } from '../lambdas/core/timing.js';
import { CORE_FIXES, STALL_MAX_MS, T0, ZOMBIE_STALL_GATED, ZOMBIE_STALL_MAX_MS } from './constants.js';
import type { Variant } from './protocol-variant.js';
import { Rng } from './rng.js';
import type { Scenario } from './scenario.js';
import { Scheduler, type Actor } from './scheduler.js';
import { emptyStats, type Checks, type SimStats } from './world-view.js';

/**
 * What every model and actor of one run shares: the seeded scheduler and randomness, the scenario and
 * variant, the fault switch, the statistics and the checks to report events to.
 */
export class SimContext {
  readonly rng: Rng;
  readonly sched: Scheduler;
  readonly stats: SimStats = emptyStats();
  /** Faults are injected until the scenario's faultsEndMs; then the run must drain. */
  faultsOn = true;
  /**
   * When the reconciler last reclaimed an expired lease (true time): its guard (`ZOMBIE_HIDE_MS`, ~17 min past the
   * lease) may start after every task settled — a surplus attention's lease whose worker stalled — so invariant
   * 8's bound counts from the later of the two.
   */
  lastReclaimAt: number | undefined;
  /** Hard SQS/DynamoDB errors (sim/model-errors.ts), set by the world; a model wraps a port with it. */
  errors: { wrap<T extends object>(actor: Actor, prefix: string, port: T): T } = {
    wrap: (_actor, _prefix, port) => port,
  };
  private idSeq = 0;
  private checksRef: Checks | undefined;

  constructor(
    readonly scenario: Scenario,
    readonly variant: Variant | undefined,
    trace: boolean,
  ) {
    this.rng = new Rng(scenario.seed);
    this.sched = new Scheduler(this.rng, T0, {
      crashProbability: scenario.faults.crashProbability,
      maxCrashes: scenario.faults.maxCrashes,
      trace,
    });
  }

  get now(): number {
    return this.sched.now;
  }

  get checks(): Checks {
    if (!this.checksRef) throw new Error('checks not wired');
    return this.checksRef;
  }

  set checks(checks: Checks) {
    this.checksRef = checks;
  }

  nextId(): string {
    return `slot-${++this.idSeq}`;
  }

  skew(): number {
    return this.rng.int(-CLOCK_SKEW_MS / 2, CLOCK_SKEW_MS / 2);
  }

  /**
   * How long one SQS/DynamoDB call of `actor` takes: a few ms; sometimes up to STALL_MAX_MS (SDK retries
   * under throttling), within the lease margin; and, for a worker, sometimes longer than the lease margin
   * (a slow call, a long GC pause): its lease can expire and be taken over meanwhile, and only fencing
   * keeps the zombie from acting on it when it wakes.
   */
  awsLatency(actor: Actor, op: string): number {
    const base = this.rng.int(1, 20);
    if (!this.faultsOn) return base;
    if (
      actor.kind === 'worker' &&
      this.rng.chance(this.scenario.faults.zombieStall) &&
      !ZOMBIE_STALL_GATED.has(op) &&
      (CORE_FIXES.wakeGuardSurvivesStall || !actor.guardOpen) &&
      (CORE_FIXES.zombieResendFenced || !actor.throttled)
    ) {
      actor.longStallAt = this.now;
      this.stats.zombieStalls++;
      if (this.sched.tracing) this.sched.log(`${actor.name}   ↳ stalls (zombie)`);
      return base + this.rng.int(LEASE_MARGIN_MS, ZOMBIE_STALL_MAX_MS);
    }
    return this.rng.chance(this.scenario.faults.stall) ? base + this.rng.int(100, STALL_MAX_MS) : base;
  }

  label(name: string, args: unknown[]): string {
    return this.sched.tracing ? `${name}(${args.map((a) => JSON.stringify(a)).join(', ')})` : name;
  }

  /** Every method of `target` becomes one scheduled operation of `actor`, its effect applied atomically when picked. */
  scheduled<T extends object>(
    actor: Actor,
    prefix: string,
    target: T,
    hooks?: {
      before(name: string, args: unknown[]): void;
      after(name: string, args: unknown[], value: unknown): void;
    },
  ): T {
    return new Proxy(target, {
      get: (inner, property) => {
        const method = (inner as unknown as Record<PropertyKey, unknown>)[property];
        if (typeof method !== 'function') return method;
        const name = String(property);
        return (...args: unknown[]) => {
          if (name === 'deferWake') actor.guardOpen = true;
          return this.sched.call(
            actor,
            this.label(`${prefix}.${name}`, args),
            this.awsLatency(
              actor,
              name === 'settle'
                ? `${prefix}.settle:${(args[3] as { status: string }).status}`
                : `${prefix}.${name}`,
            ),
            () => {
              hooks?.before(name, args);
              const result = (method as (...a: unknown[]) => Promise<unknown>).apply(inner, args);
              return result.then((value) => {
                hooks?.after(name, args, value);
                if (this.sched.tracing) this.sched.log(`${actor.name}   ↳ ${JSON.stringify(value)}`);
                return value;
              });
            },
          );
        };
      },
    });
  }
}
