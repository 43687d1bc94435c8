import { CLOCK_SKEW_MS } from '../lambdas/core/timing.js';
import { STALL_MAX_MS, T0 } from './constants.js';
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

  awsLatency(): number {
    const base = this.rng.int(1, 20);
    return this.faultsOn && this.rng.chance(this.scenario.faults.stall)
      ? base + this.rng.int(100, STALL_MAX_MS)
      : base;
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
        return (...args: unknown[]) =>
          this.sched.call(actor, this.label(`${prefix}.${name}`, args), this.awsLatency(), () => {
            hooks?.before(name, args);
            const result = (method as (...a: unknown[]) => Promise<unknown>).apply(inner, args);
            return result.then((value) => {
              hooks?.after(name, args, value);
              if (this.sched.tracing) this.sched.log(`${actor.name}   ↳ ${JSON.stringify(value)}`);
              return value;
            });
          });
      },
    });
  }
}
