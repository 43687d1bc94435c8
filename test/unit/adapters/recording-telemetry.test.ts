import { describe, expect, it } from 'vitest';
import { RecordingTelemetry, type LogRecord } from '../../../lambdas/adapters/recording-telemetry.js';
import { MetricNames } from '../../../lambdas/core/names.js';

describe('RecordingTelemetry', () => {
  it('adds counts up', () => {
    const telemetry = new RecordingTelemetry();
    telemetry.count(MetricNames.tasksAccepted, 2);
    telemetry.count(MetricNames.tasksAccepted);
    expect(telemetry.total(MetricNames.tasksAccepted)).toBe(3);
  });

  it('keeps a total per dimension set and an overall total', () => {
    const telemetry = new RecordingTelemetry();
    telemetry.count(MetricNames.slicesEnded, 1, { reason: 'empty' });
    telemetry.count(MetricNames.slicesEnded, 1, { reason: 'max_time' });
    telemetry.count(MetricNames.slicesEnded, 1, { reason: 'empty' });
    expect([
      telemetry.total(MetricNames.slicesEnded, { reason: 'empty' }),
      telemetry.total(MetricNames.slicesEnded),
    ]).toEqual([2, 3]);
  });

  it('is zero for a counter never counted', () => {
    expect(new RecordingTelemetry().total(MetricNames.leaseBlocked)).toBe(0);
  });

  it('hands every count and timing, with its dimensions, to subscribers', () => {
    const telemetry = new RecordingTelemetry();
    const seen: unknown[] = [];
    telemetry.subscribe((o) => seen.push(o));
    telemetry.count(MetricNames.slicesEnded, 1, { reason: 'empty' });
    telemetry.timing(MetricNames.marketplaceLatency, 12, { statusClass: '2xx' });
    expect(seen).toEqual([
      { kind: 'count', name: 'SlicesEnded', value: 1, dimensions: { reason: 'empty' } },
      { kind: 'timing', name: 'MarketplaceLatency', value: 12, dimensions: { statusClass: '2xx' } },
    ]);
  });

  it('stops telling a subscriber once it unsubscribes', () => {
    const telemetry = new RecordingTelemetry();
    const seen: unknown[] = [];
    const unsubscribe = telemetry.subscribe((o) => seen.push(o));
    unsubscribe();
    telemetry.count(MetricNames.tasksAccepted);
    expect(seen).toEqual([]);
  });

  it('keeps timings', () => {
    const telemetry = new RecordingTelemetry();
    telemetry.timing(MetricNames.marketplaceLatency, 12);
    telemetry.timing(MetricNames.marketplaceLatency, 30);
    expect(telemetry.timings.get(MetricNames.marketplaceLatency)).toEqual([12, 30]);
  });

  it('sends warnings and errors to the sink by default, not info', () => {
    const logs: LogRecord[] = [];
    const telemetry = new RecordingTelemetry((r) => logs.push(r));
    telemetry.info('i');
    telemetry.warn('w', { a: 1 });
    telemetry.error('e');
    expect(logs).toEqual([
      { level: 'warn', message: 'w', fields: { a: 1 } },
      { level: 'error', message: 'e' },
    ]);
  });

  it('sends info too at level info', () => {
    const logs: LogRecord[] = [];
    new RecordingTelemetry((r) => logs.push(r), 'info').info('i');
    expect(logs).toEqual([{ level: 'info', message: 'i' }]);
  });
});
