import type { Metrics } from '@aws-lambda-powertools/metrics';
import type { Context } from 'aws-lambda';
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
    const telemetry = new PowertoolsTelemetry('test-service');
    const publish = vi.spyOn(telemetry.metrics, 'publishStoredMetrics').mockReturnThis();
    telemetry.count(MetricNames.tasksAccepted);
    telemetry.flush();
    expect(publish).toHaveBeenCalledTimes(1);
  });

  it('flush publishes nothing when nothing was batched (Powertools would warn of empty metrics)', () => {
    const { telemetry, publish } = quietTelemetry();
    telemetry.flush();
    expect(publish).not.toHaveBeenCalled();
  });
});

/** Runs `fn` and returns the JSON lines Powertools printed (logs and EMF records alike). */
const printed = (fn: () => void): Record<string, unknown>[] => {
  const lines: string[] = [];
  const spies = (['log', 'info', 'warn', 'error', 'debug'] as const).map((method) =>
    vi.spyOn(console, method).mockImplementation((line: unknown) => void lines.push(String(line))),
  );
  const writes = [process.stdout, process.stderr].map((stream) =>
    vi.spyOn(stream, 'write').mockImplementation((chunk: unknown) => {
      lines.push(String(chunk));
      return true;
    }),
  );
  try {
    fn();
  } finally {
    for (const spy of [...spies, ...writes]) spy.mockRestore();
  }
  return lines
    .flatMap((chunk) => chunk.split('\n'))
    .filter((line) => line.trim().startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
};

describe('PowertoolsTelemetry.scoped', () => {
  const ids = { storeId: 'store-1', tenantId: 'tenant-1', correlationId: 'req-1' };

  it('puts the scope’s fields on every log line, under the call’s own fields', () => {
    const lines = printed(() => {
      const scope = new PowertoolsTelemetry('svc').scoped(ids);
      scope.info('slice ended', { sliceId: 'a:1' });
      scope.warn('task dead-lettered', { correlationId: 'req-0' });
    });
    expect(
      lines.map((l) => [l['message'], l['storeId'], l['tenantId'], l['correlationId'], l['sliceId']]),
    ).toEqual([
      ['slice ended', 'store-1', 'tenant-1', 'req-1', 'a:1'],
      ['task dead-lettered', 'store-1', 'tenant-1', 'req-0', undefined],
    ]);
  });

  it('carries the fields on its EMF records as properties, never as dimensions', () => {
    const lines = printed(() => {
      const scope = new PowertoolsTelemetry('svc').scoped(ids);
      scope.count(MetricNames.tasksDelivered, 2);
      scope.count(MetricNames.slicesEnded, 1, { reason: 'empty' });
      scope.end();
    });
    const emf = lines.filter((l) => '_aws' in l);
    expect(
      emf.map((record) => ({
        dimensions: (record['_aws'] as { CloudWatchMetrics: { Dimensions: string[][] }[] })
          .CloudWatchMetrics[0]?.Dimensions,
        ids: [record['storeId'], record['tenantId'], record['correlationId']],
      })),
    ).toEqual([
      { dimensions: [['service', 'reason']], ids: ['store-1', 'tenant-1', 'req-1'] },
      { dimensions: [['service']], ids: ['store-1', 'tenant-1', 'req-1'] },
    ]);
  });

  it('keeps the fields on every record when Powertools publishes by itself at 100 values', () => {
    const lines = printed(() => {
      const scope = new PowertoolsTelemetry('svc').scoped(ids);
      for (let i = 0; i < 150; i++) scope.timing(MetricNames.marketplaceLatency, i);
      scope.end();
    });
    const emf = lines.filter((l) => '_aws' in l);
    expect({
      records: emf.length,
      values: emf.reduce((n, r) => n + ([r[MetricNames.marketplaceLatency]].flat().length ?? 0), 0),
      stores: emf.map((r) => r['storeId']),
    }).toEqual({ records: 2, values: 150, stores: ['store-1', 'store-1'] });
  });

  it('names the Lambda invocation on every line once bound, scopes included', () => {
    const context = {
      awsRequestId: 'lambda-req-1',
      functionName: 'aq-worker',
      functionVersion: '$LATEST',
      invokedFunctionArn: 'arn:aws:lambda:us-east-1:123456789012:function:aq-worker',
      memoryLimitInMB: '512',
    } as unknown as Context;
    const lines = printed(() => {
      const root = new PowertoolsTelemetry('svc');
      root.bindInvocation(context);
      root.scoped(ids).info('inside');
      root.info('outside');
    });
    expect(lines.map((l) => [l['message'], l['function_request_id'], l['function_name']])).toEqual([
      ['inside', 'lambda-req-1', 'aq-worker'],
      ['outside', 'lambda-req-1', 'aq-worker'],
    ]);
  });

  it('leaves the parent’s log lines without the scope’s fields', () => {
    const lines = printed(() => {
      const root = new PowertoolsTelemetry('svc');
      root.scoped(ids).info('inside');
      root.info('outside');
    });
    expect(lines.map((l) => [l['message'], l['storeId']])).toEqual([
      ['inside', 'store-1'],
      ['outside', undefined],
    ]);
  });
});
