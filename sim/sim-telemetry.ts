import type { ScopedTelemetry } from '../lambdas/core/ports.js';
import type { Actor, Scheduler } from './scheduler.js';

/** The core's logs, into the step trace (when tracing); metrics are not needed by the checks. */
export class SimTelemetry implements ScopedTelemetry {
  constructor(
    private readonly sched: Scheduler,
    private readonly actor: Actor,
  ) {}
  count(): void {}
  timing(): void {}
  private log(level: string, message: string, fields?: Record<string, unknown>): void {
    if (this.sched.tracing)
      this.sched.log(
        `${this.actor.name}   [${level}] ${message}${fields ? ' ' + JSON.stringify(fields) : ''}`,
      );
  }
  info(message: string, fields?: Record<string, unknown>): void {
    this.log('info', message, fields);
  }
  warn(message: string, fields?: Record<string, unknown>): void {
    this.log('warn', message, fields);
  }
  error(message: string, fields?: Record<string, unknown>): void {
    this.log('error', message, fields);
  }
  /** The trace names the actor already; a scope's fields would only lengthen it. */
  scoped(): SimTelemetry {
    return this;
  }
  end(): void {}
}
