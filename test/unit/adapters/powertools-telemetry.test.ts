import type { Metrics } from '@aws-lambda-powertools/metrics';
import { describe, expect, it, vi } from 'vitest';
import { PowertoolsTelemetry } from '../../../lambdas/adapters/powertools-telemetry.js';
import { METRICS_NAMESPACE, MetricNames } from '../../../lambdas/core/names.js';

const quietTelemetry = () => {
  const telemetry = new PowertoolsTelemetry('test-service');
  const single = { addDimension: vi.fn(), addMetric: vi.fn() };
  return {
    telemetry,
    single,
    addMetric: vi.spyOn(telemetry.metrics, 'addMetric').mockReturnThis(),
    singleMetric: vi.spyOn(telemetry.metrics, 'singleMetric').mockReturnValue(single as unknown as Metrics),
    publish: vi.spyOn(telemetry.metrics, 'publishStoredMetrics').mockReturnThis(),
    info: vi.spyOn(telemetry.logger, 'info').mockImplementation(() => undefined),
    warn: vi.spyOn(telemetry.logger, 'warn').mockImplementation(() => undefined),
    error: vi.spyOn(telemetry.logger, 'error').mockImplementation(() => undefined),
  };
};

describe('PowertoolsTelemetry', () => {
  it('publishes to the project’s namespace', () => {
    const { telemetry } = quietTelemetry();
    expect(telemetry.metrics).toMatchObject({ namespace: METRICS_NAMESPACE });
  });

  it('batches a count without dimensions', () => {
    const { telemetry, addMetric } = quietTelemetry();
    telemetry.count(MetricNames.tasksAccepted, 3);
    expect(addMetric.mock.calls).toEqual([['TasksAccepted', 'Count', 3]]);
  });

  it('counts 1 by default', () => {
    const { telemetry, addMetric } = quietTelemetry();
    telemetry.count(MetricNames.slicesStarted);
    expect(addMetric.mock.calls).toEqual([['SlicesStarted', 'Count', 1]]);
  });

  it('sends a count with dimensions as a single metric carrying them', () => {
    const { telemetry, single, addMetric } = quietTelemetry();
    telemetry.count(MetricNames.slicesEnded, 1, { reason: 'empty' });
    expect({
      dimensions: single.addDimension.mock.calls,
      metric: single.addMetric.mock.calls,
      batched: addMetric.mock.calls.length,
    }).toEqual({ dimensions: [['reason', 'empty']], metric: [['SlicesEnded', 'Count', 1]], batched: 0 });
  });

  it('treats empty dimensions as none', () => {
    const { telemetry, singleMetric, addMetric } = quietTelemetry();
    telemetry.count(MetricNames.slicesStarted, 1, {});
    expect([singleMetric.mock.calls.length, addMetric.mock.calls.length]).toEqual([0, 1]);
  });

  it('records timings in milliseconds', () => {
    const { telemetry, single } = quietTelemetry();
    telemetry.timing(MetricNames.marketplaceLatency, 120, { statusClass: '2xx' });
    expect(single.addMetric.mock.calls).toEqual([['MarketplaceLatency', 'Milliseconds', 120]]);
  });

  it.each(['info', 'warn', 'error'] as const)('logs %s with its fields', (level) => {
    const spies = quietTelemetry();
    spies.telemetry[level]('something happened', { storeId: 's1' });
    expect(spies[level].mock.calls).toEqual([['something happened', { storeId: 's1' }]]);
  });

  it('flush publishes the batched metrics', () => {
    const { telemetry, publish } = quietTelemetry();
    telemetry.flush();
    expect(publish).toHaveBeenCalledTimes(1);
  });
});
