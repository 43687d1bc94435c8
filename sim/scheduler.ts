import type { Clock } from '../lambdas/core/ports.js';
import type { Rng } from './rng.js';

/**
 * The seeded scheduler: a virtual clock and a run queue of pending operations. Every port call of the
 * real core code becomes an operation that completes only when the scheduler picks it, so the seed alone
 * decides the interleaving. A crash is the scheduler dropping an actor's operation (maybe after its
 * effect took place) and every later one: the actor's promise chain simply never resumes.
 */
export type ActorKind = 'ingest' | 'worker' | 'reconciler' | 'operator' | 'env';

export interface Actor {
  readonly id: number;
  readonly name: string;
  readonly kind: ActorKind;
  /** This actor's clock offset from true time (|skew| ≤ CLOCK_SKEW_MS / 2, so any two clocks agree within CLOCK_SKEW_MS). */
  readonly skewMs: number;
  crashed: boolean;
  /**
   * True time its Lambda timeout kills this actor (workers): an operation that would complete later is
   * dropped with the actor — its effect applied or not, as a request in flight at the kill — like a crash.
   */
  killAt?: number;
  /** When this actor last began a stall longer than the lease margin (a zombie in the making). */
  longStallAt?: number;
  /**
   * Between a write-ahead wake guard (deferWake) and the SQS call that starts the guarded message's timer
   * (see CORE_FIXES.wakeGuardSurvivesStall).
   */
  guardOpen?: boolean;
  /** Got a marketplace 429 (see CORE_FIXES.zombieResendFenced). */
  throttled?: boolean;
  finished: boolean;
  /** Called once when the actor crashes (free its worker slot, note what it left behind). */
  onCrash?: () => void;
}

const DEFER = Symbol('defer');

/** Returned by an operation's effect to keep the caller waiting (a long poll that found nothing yet). */
export interface Deferred {
  readonly [DEFER]: true;
  readonly afterMs: number;
  readonly apply: () => unknown;
}

export const defer = (afterMs: number, apply: () => unknown): Deferred => ({ [DEFER]: true, afterMs, apply });

const isDeferred = (value: unknown): value is Deferred =>
  typeof value === 'object' && value !== null && DEFER in value;

interface Op {
  readonly actor: Actor;
  readonly label: string;
  readyAt: number;
  apply: () => unknown;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
  /** Called if the operation is dropped by a crash; `applied` says whether its effect took place. */
  readonly onDrop?: (applied: boolean) => void;
}

export interface SchedulerOptions {
  /** Probability that picking an operation of a crashable actor crashes it instead. */
  crashProbability: number;
  maxCrashes: number;
  trace: boolean;
}

const immediate = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

export class Scheduler {
  now: number;
  private readonly start: number;
  crashes = 0;
  /** Actors killed by their Lambda timeout (`killAt`). */
  timeouts = 0;
  steps = 0;
  crashesEnabled = true;
  readonly traceLines: string[] = [];
  private ops: Op[] = [];
  private actorSeq = 0;
  private wake: (() => void) | undefined;

  constructor(
    private readonly rng: Rng,
    start: number,
    private readonly options: SchedulerOptions,
  ) {
    this.now = start;
    this.start = start;
  }

  get tracing(): boolean {
    return this.options.trace;
  }

  log(line: string): void {
    if (this.options.trace)
      this.traceLines.push(`${((this.now - this.start) / 1000).toFixed(3).padStart(9)}s ${line}`);
  }

  newActor(kind: ActorKind, name: string, skewMs: number): Actor {
    return {
      id: ++this.actorSeq,
      name: `${name}#${this.actorSeq}`,
      kind,
      skewMs,
      crashed: false,
      finished: false,
    };
  }

  clockFor(actor: Actor): Clock {
    return {
      now: () => this.now + actor.skewMs,
      sleep: (ms: number) => this.call(actor, 'sleep', Math.max(0, ms), () => undefined),
    };
  }

  /** Registers one operation of `actor`; its effect runs when the scheduler picks it, at or after `latencyMs`. */
  call<T>(
    actor: Actor,
    label: string,
    latencyMs: number,
    apply: () => T | Promise<T> | Deferred,
    onDrop?: (applied: boolean) => void,
  ): Promise<T> {
    if (actor.crashed) return new Promise<T>(() => undefined);
    return new Promise<T>((resolve, reject) => {
      this.ops.push({
        actor,
        label,
        readyAt: this.now + latencyMs,
        apply,
        resolve: resolve as (value: unknown) => void,
        reject,
        ...(onDrop ? { onDrop } : {}),
      });
      this.notify();
    });
  }

  /** An actor ended (its top-level promise settled): lets the step that resumed it return at once. */
  notify(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }

  earliestReadyAt(): number | undefined {
    let min: number | undefined;
    for (const op of this.ops) if (min === undefined || op.readyAt < min) min = op.readyAt;
    return min;
  }

  hasRunnable(): boolean {
    return this.ops.some((op) => op.readyAt <= this.now);
  }

  /** Picks one runnable operation (seeded), runs its effect (or crashes its actor), and lets the actor run on. */
  async step(): Promise<boolean> {
    const runnable = this.ops.filter((op) => op.readyAt <= this.now);
    if (runnable.length === 0) return false;
    const op = this.rng.pick(runnable);
    this.ops.splice(this.ops.indexOf(op), 1);
    this.steps++;
    const timedOut = op.actor.killAt !== undefined && op.readyAt > op.actor.killAt;
    if (
      timedOut ||
      (this.crashesEnabled &&
        op.actor.kind !== 'env' &&
        this.crashes < this.options.maxCrashes &&
        this.rng.chance(this.options.crashProbability))
    ) {
      const applied = this.rng.chance(0.5);
      if (applied) {
        try {
          const result = op.apply();
          if (result instanceof Promise) result.catch(() => undefined);
        } catch {
          // The effect failed; the actor is gone either way.
        }
      }
      this.log(
        `${op.actor.name} ${timedOut ? 'TIMED OUT' : 'CRASH'} at ${op.label} (effect ${applied ? 'applied' : 'not applied'})`,
      );
      op.onDrop?.(applied);
      if (timedOut) this.timeouts++;
      this.crash(op.actor, !timedOut);
      await this.settle();
      return true;
    }
    let result: unknown;
    try {
      result = op.apply();
    } catch (error) {
      this.log(`${op.actor.name} ${op.label} → throws ${String(error)}`);
      op.reject(error);
      await this.settle();
      return true;
    }
    if (isDeferred(result)) {
      this.ops.push({ ...op, readyAt: this.now + result.afterMs, apply: result.apply });
      return true;
    }
    if (this.options.trace) this.log(`${op.actor.name} ${op.label}`);
    if (result instanceof Promise) result.then(op.resolve, op.reject);
    else op.resolve(result);
    await this.settle();
    return true;
  }

  crash(actor: Actor, counted = true): void {
    if (actor.crashed || actor.finished) return;
    actor.crashed = true;
    if (counted) this.crashes++;
    const dropped = this.ops.filter((op) => op.actor === actor);
    this.ops = this.ops.filter((op) => op.actor !== actor);
    for (const op of dropped) op.onDrop?.(false);
    actor.onCrash?.();
  }

  /** Waits until the resumed actor blocks on its next operation or ends (or, failing a signal, one macrotask). */
  private async settle(): Promise<void> {
    await Promise.race([new Promise<void>((resolve) => (this.wake = resolve)), immediate()]);
    this.wake = undefined;
    // Let any continuation queued behind the signal (a parallel branch) run before the next pick.
    await Promise.resolve();
  }
}
