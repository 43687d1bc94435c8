import { Logger } from '@aws-lambda-powertools/logger';
import type { Context } from 'aws-lambda';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { METRICS_NAMESPACE, type MetricName } from '../core/names.js';
import type { Fields, ScopedTelemetry } from '../core/ports.js';

type Unit = (typeof MetricUnit)[keyof typeof MetricUnit];

/** EMF metadata values are strings; undefined fields are left out. */
const metadataOf = (fields: Fields): [string, string][] =>
  Object.entries(fields)
    .filter(([, value]) => value !== undefined)
    .map(([key, value]) => [key, typeof value === 'string' ? value : JSON.stringify(value)]);

/**
 * Telemetry on Lambda: Powertools Logger (structured JSON) and Metrics (CloudWatch EMF). Metrics
 * without dimensions are batched and flushed once per invocation (or per scope); the few with a
 * low-cardinality dimension (a reason, a status class) go out as single EMF records. A scope's fields
 * ride on its log lines as persistent keys and on its EMF records as metadata (properties, not
 * dimensions), so per-store values cost no custom-metric dimension.
 */
export class PowertoolsTelemetry implements ScopedTelemetry {
  readonly logger: Logger;
  readonly metrics: Metrics;

  constructor(
    private readonly serviceName: string,
    parent?: { logger: Logger; fields: Fields },
    private readonly metadata: [string, string][] = [],
  ) {
    this.logger = parent
      ? parent.logger.createChild({ persistentKeys: parent.fields as Record<string, never> })
      : new Logger({ serviceName });
    this.metrics = new Metrics({ namespace: METRICS_NAMESPACE, serviceName });
  }

  private add(name: MetricName, unit: Unit, value: number, dimensions?: Record<string, string>): void {
    if (!dimensions || Object.keys(dimensions).length === 0) {
      // Before every metric, not once: Powertools publishes by itself when a metric reaches 100 values,
      // and that clears the metadata, so the records after it would lose the scope's fields.
      for (const [key, meta] of this.metadata) this.metrics.addMetadata(key, meta);
      this.metrics.addMetric(name, unit, value);
      return;
    }
    const single = this.metrics.singleMetric();
    for (const [key, dim] of Object.entries(dimensions)) single.addDimension(key, dim);
    for (const [key, meta] of this.metadata) single.addMetadata(key, meta);
    single.addMetric(name, unit, value);
  }

  count(name: MetricName, value = 1, dimensions?: Record<string, string>): void {
    this.add(name, MetricUnit.Count, value, dimensions);
  }
  timing(name: MetricName, milliseconds: number, dimensions?: Record<string, string>): void {
    this.add(name, MetricUnit.Milliseconds, milliseconds, dimensions);
  }
  info(message: string, fields?: Fields): void {
    this.logger.info(message, fields ?? {});
  }
  warn(message: string, fields?: Fields): void {
    this.logger.warn(message, fields ?? {});
  }
  error(message: string, fields?: Fields): void {
    this.logger.error(message, fields ?? {});
  }
  scoped(fields: Fields): PowertoolsTelemetry {
    const defined = Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined));
    return new PowertoolsTelemetry(this.serviceName, { logger: this.logger, fields: defined }, [
      ...this.metadata,
      ...metadataOf(defined),
    ]);
  }
  /**
   * The Lambda invocation this container is serving: its request id, function name and cold start go on
   * every log line from here on, scopes included, so a line can be matched with the invocation's REPORT.
   */
  bindInvocation(context: Context): void {
    this.logger.addContext(context);
  }
  /** Publishes the batched metrics; nothing when none are left (Powertools would warn of empty metrics). */
  flush(): void {
    if (this.metrics.hasStoredMetrics()) this.metrics.publishStoredMetrics();
  }
  end(): void {
    this.flush();
  }
}
