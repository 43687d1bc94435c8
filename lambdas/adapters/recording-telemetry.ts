import type { MetricName } from '../core/names.js';
import type { Fields, ScopedTelemetry } from '../core/ports.js';

export interface LogRecord {
  level: 'info' | 'warn' | 'error';
  message: string;
  fields?: Fields;
}

export type MetricObservation = {
  kind: 'count' | 'timing';
  name: MetricName;
  dimensions?: Record<string, string>;
  /** The scope's fields (EMF properties on AWS): storeId, tenantId, correlationId. */
  properties?: Fields;
  value: number;
};

/**
 * Telemetry that keeps counters in memory: local mode's status output and the tests read it.
 * `sink` receives log records at or above `level` (local mode prints warnings and errors).
 */
export class RecordingTelemetry implements ScopedTelemetry {
  readonly counters = new Map<string, number>();
  readonly timings = new Map<string, number[]>();
  private readonly listeners = new Set<(observation: MetricObservation) => void>();
  private readonly order = { info: 0, warn: 1, error: 2 } as const;

  constructor(
    private readonly sink?: (record: LogRecord) => void,
    private readonly level: LogRecord['level'] = 'warn',
  ) {}

  static key(name: MetricName, dimensions?: Record<string, string>): string {
    const dims = Object.entries(dimensions ?? {})
      .map(([k, v]) => `${k}=${v}`)
      .join(',');
    return dims ? `${name}{${dims}}` : name;
  }

  /** Every metric as it is recorded, with its dimensions (what one EMF record carries); returns the unsubscribe. */
  subscribe(listener: (observation: MetricObservation) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
  private notify(observation: MetricObservation): void {
    for (const listener of this.listeners) listener(observation);
  }

  count(name: MetricName, value = 1, dimensions?: Record<string, string>, properties?: Fields): void {
    const key = RecordingTelemetry.key(name, dimensions);
    this.counters.set(key, (this.counters.get(key) ?? 0) + value);
    if (dimensions) this.counters.set(name, (this.counters.get(name) ?? 0) + value);
    if (this.listeners.size > 0)
      this.notify({
        kind: 'count',
        name,
        value,
        ...(dimensions ? { dimensions } : {}),
        ...(properties ? { properties } : {}),
      });
  }
  timing(
    name: MetricName,
    milliseconds: number,
    dimensions?: Record<string, string>,
    properties?: Fields,
  ): void {
    const list = this.timings.get(name) ?? [];
    if (list.length < 100_000) list.push(milliseconds);
    this.timings.set(name, list);
    if (this.listeners.size > 0)
      this.notify({
        kind: 'timing',
        name,
        value: milliseconds,
        ...(dimensions ? { dimensions } : {}),
        ...(properties ? { properties } : {}),
      });
  }
  /** The counter's total, or the total for one dimension set. */
  total(name: MetricName, dimensions?: Record<string, string>): number {
    return this.counters.get(RecordingTelemetry.key(name, dimensions)) ?? 0;
  }
  scoped(fields: Fields): ScopedTelemetry {
    return new RecordingScope(this, fields);
  }
  end(): void {}
  private log(level: LogRecord['level'], message: string, fields?: Fields): void {
    if (this.sink && this.order[level] >= this.order[this.level])
      this.sink({ level, message, ...(fields ? { fields } : {}) });
  }
  info(message: string, fields?: Fields): void {
    this.log('info', message, fields);
  }
  warn(message: string, fields?: Fields): void {
    this.log('warn', message, fields);
  }
  error(message: string, fields?: Fields): void {
    this.log('error', message, fields);
  }
}

/** A scope of a RecordingTelemetry: same counters, its fields on every log record and metric observation. */
class RecordingScope implements ScopedTelemetry {
  constructor(
    private readonly root: RecordingTelemetry,
    private readonly fields: Fields,
  ) {}
  count(name: MetricName, value = 1, dimensions?: Record<string, string>): void {
    this.root.count(name, value, dimensions, this.fields);
  }
  timing(name: MetricName, milliseconds: number, dimensions?: Record<string, string>): void {
    this.root.timing(name, milliseconds, dimensions, this.fields);
  }
  info(message: string, fields?: Fields): void {
    this.root.info(message, { ...this.fields, ...fields });
  }
  warn(message: string, fields?: Fields): void {
    this.root.warn(message, { ...this.fields, ...fields });
  }
  error(message: string, fields?: Fields): void {
    this.root.error(message, { ...this.fields, ...fields });
  }
  scoped(fields: Fields): ScopedTelemetry {
    return new RecordingScope(this.root, { ...this.fields, ...fields });
  }
  end(): void {}
}
