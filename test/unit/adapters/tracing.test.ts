import { Tracer } from '@aws-lambda-powertools/tracer';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { tracer } from '../../../lambdas/adapters/tracing.js';
import { tracingWanted } from '../../../lambdas/config/runtime-config.js';

describe('the process tracer', () => {
  afterEach(() => {
    vi.unstubAllEnvs();
    vi.resetModules();
  });

  it('is Powertools’ tracer on Lambda, loaded when the module is', async () => {
    vi.stubEnv('AWS_LAMBDA_FUNCTION_NAME', 'aq-worker');
    vi.resetModules();
    const loaded = await import('../../../lambdas/adapters/tracing.js');
    expect(loaded.tracer).toBeInstanceOf(Tracer);
  });

  it.each([
    ['on Lambda, tracing not turned off', { AWS_LAMBDA_FUNCTION_NAME: 'aq-worker' }, true],
    [
      'on Lambda, POWERTOOLS_TRACE_ENABLED=true',
      { AWS_LAMBDA_FUNCTION_NAME: 'aq-worker', POWERTOOLS_TRACE_ENABLED: 'true' },
      true,
    ],
    [
      'on Lambda, POWERTOOLS_TRACE_ENABLED=false (-c tracing=false)',
      { AWS_LAMBDA_FUNCTION_NAME: 'aq-worker', POWERTOOLS_TRACE_ENABLED: 'false' },
      false,
    ],
    ['off Lambda (local mode, tests)', {}, false],
    ['off Lambda, even with POWERTOOLS_TRACE_ENABLED=true', { POWERTOOLS_TRACE_ENABLED: 'true' }, false],
  ])('is wanted %s: %s', (_case, env, wanted) => {
    expect(tracingWanted(env)).toBe(wanted);
  });

  it('is not loaded off Lambda: clients go untouched and there is no segment', () => {
    const client = { send: () => undefined };
    expect({
      enabled: tracer.isTracingEnabled(),
      segment: tracer.getSegment(),
      same: tracer.captureAWSv3Client(client) === client,
    }).toEqual({ enabled: false, segment: undefined, same: true });
  });
});
