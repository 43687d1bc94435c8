import type { MetricName } from '../core/names.js';
import type { Fields, Telemetry } from '../core/ports.js';

export interface LogRecord {
  level: 'info' | 'warn' | 'error';
  message: string;
  fields?: Fields;
}

/**
 * Telemetry that keeps counters in memory: local mode's status output and the tests read it.
 * `sink` receives log records at or above `level` (local mode prints warnings and errors).
 */
export class RecordingTelemetry implements Telemetry {
  readonly counters = new Map<string, number>();
  readonly timings = new Map<string, number[]>();
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

  count(name: MetricName, value = 1, dimensions?: Record<string, string>): void {
    const key = RecordingTelemetry.key(name, dimensions);
    this.counters.set(key, (this.counters.get(key) ?? 0) + value);
    if (dimensions) this.counters.set(name, (this.counters.get(name) ?? 0) + value);
  }
  timing(name: MetricName, milliseconds: number): void {
    const list = this.timings.get(name) ?? [];
    if (list.length < 100_000) list.push(milliseconds);
    this.timings.set(name, list);
  }
  /** The counter's total, or the total for one dimension set. */
  total(name: MetricName, dimensions?: Record<string, string>): number {
    return this.counters.get(RecordingTelemetry.key(name, dimensions)) ?? 0;
  }
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
