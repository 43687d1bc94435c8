import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { METRICS_NAMESPACE, type MetricName } from '../core/names.js';
import type { Fields, Telemetry } from '../core/ports.js';

/**
 * Telemetry on Lambda: Powertools Logger (structured JSON) and Metrics (CloudWatch EMF). Metrics
 * without dimensions are batched and flushed once per invocation; the few with a low-cardinality
 * dimension (a reason, a status class) go out as single EMF records.
 */
export class PowertoolsTelemetry implements Telemetry {
  readonly logger: Logger;
  readonly metrics: Metrics;

  constructor(serviceName: string) {
    this.logger = new Logger({ serviceName });
    this.metrics = new Metrics({ namespace: METRICS_NAMESPACE, serviceName });
  }

  private add(
    name: MetricName,
    unit: (typeof MetricUnit)[keyof typeof MetricUnit],
    value: number,
    dimensions?: Record<string, string>,
  ): void {
    if (!dimensions || Object.keys(dimensions).length === 0) {
      this.metrics.addMetric(name, unit, value);
      return;
    }
    const single = this.metrics.singleMetric();
    for (const [key, dim] of Object.entries(dimensions)) single.addDimension(key, dim);
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
  flush(): void {
    this.metrics.publishStoredMetrics();
  }
}
