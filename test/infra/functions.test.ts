import { Match } from 'aws-cdk-lib/assertions';
import { basename } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EnvNames } from '../../lambdas/config/env-names.js';
import type { FunctionName } from '../../lambdas/config/runtime-config.js';
import { FUNCTIONS } from '../../lambdas/config/topology.js';
import { METRICS_NAMESPACE } from '../../lambdas/core/names.js';
import { DEFAULT_QUEUE_PREFIX } from '../../lib/attention-queue-stack.js';
import { API_STAGE_NAME } from '../../lib/constructs/http-api.js';
import { idsMatching, logicalIdOf, MARKETPLACE_BASE_URL, resourceById, synthStack } from './synth-stack.js';

const { stack, template } = synthStack();
const FUNCTION_NAMES = Object.keys(FUNCTIONS) as FunctionName[];
const propsOf = (fn: FunctionName): Record<string, unknown> =>
  resourceById(template, logicalIdOf(stack.functions[fn])).Properties ?? {};
const variablesOf = (fn: FunctionName): Record<string, unknown> =>
  (propsOf(fn).Environment as { Variables: Record<string, unknown> }).Variables;

/** Names whose value the stack knows at deploy time; the rest (optional tuning, endpoints, region) are left out. */
const PROVIDED_AT_DEPLOY: readonly string[] = [
  EnvNames.queuePrefix,
  EnvNames.storesTable,
  EnvNames.dispatchTable,
  EnvNames.tokensTable,
  EnvNames.deliveriesTable,
  EnvNames.attentionQueueUrl,
  EnvNames.attentionQueueUrlHigh,
  EnvNames.attentionQueueUrlLow,
  // The confirm queue (issue #11): on the worker.
  EnvNames.confirmQueueUrl,
  EnvNames.marketplaceBaseUrl,
  EnvNames.usagePlanStage,
  // Store priority on AWS: on the reconciler.
  EnvNames.levelFloors,
  EnvNames.levelMappings,
  EnvNames.levelLoans,
];
const ON_EVERY_FUNCTION = [
  EnvNames.serviceName,
  EnvNames.metricsNamespace,
  EnvNames.traceEnabled,
  'NODE_OPTIONS',
];

describe('every function', () => {
  it('is one of the topology functions', () => {
    template.resourceCountIs('AWS::Lambda::Function', FUNCTION_NAMES.length);
  });

  it('is traced by X-Ray (active) by default', () => {
    template.allResourcesProperties('AWS::Lambda::Function', { TracingConfig: { Mode: 'Active' } });
  });

  it('turns Powertools Tracer on by default', () => {
    template.allResourcesProperties('AWS::Lambda::Function', {
      Environment: { Variables: Match.objectLike({ [EnvNames.traceEnabled]: 'true' }) },
    });
  });

  it('runs on nodejs24.x', () => {
    template.allResourcesProperties('AWS::Lambda::Function', { Runtime: 'nodejs24.x' });
  });

  it('runs on arm64', () => {
    template.allResourcesProperties('AWS::Lambda::Function', { Architectures: ['arm64'] });
  });

  it('keeps its logs for a month (every log group has a retention)', () => {
    template.allResourcesProperties('AWS::Logs::LogGroup', { RetentionInDays: 30 });
  });
});

describe.each(FUNCTION_NAMES)('the %s function', (fn) => {
  const spec = FUNCTIONS[fn];

  it(`times out after ${spec.timeoutSeconds} s`, () => {
    expect(propsOf(fn).Timeout).toBe(spec.timeoutSeconds);
  });

  it(`has ${spec.memoryMb} MB`, () => {
    expect(propsOf(fn).MemorySize).toBe(spec.memoryMb);
  });

  it('calls the exported handler', () => {
    expect(propsOf(fn).Handler).toBe('index.handler');
  });

  it('logs to its own log group', () => {
    const logGroup = (propsOf(fn).LoggingConfig as { LogGroup: unknown }).LogGroup;
    expect(idsMatching(template, 'AWS::Logs::LogGroup', {})).toContain((logGroup as { Ref: string }).Ref);
  });

  it('gets exactly the deploy-time variables its topology entry lists, plus Powertools and NODE_OPTIONS', () => {
    const expected = [...spec.env.filter((name) => PROVIDED_AT_DEPLOY.includes(name)), ...ON_EVERY_FUNCTION];
    expect(Object.keys(variablesOf(fn)).sort()).toEqual(expected.sort());
  });

  it.each([EnvNames.sqsEndpoint, EnvNames.dynamoEndpoint, EnvNames.region, 'ADMIN_TOKEN'])(
    'has no %s',
    (name) => {
      expect(variablesOf(fn)).not.toHaveProperty(name);
    },
  );

  it('has the metrics namespace', () => {
    expect(variablesOf(fn)[EnvNames.metricsNamespace]).toBe(METRICS_NAMESPACE);
  });

  it("is named for Powertools after its handler file (the name the runtime's telemetry uses)", () => {
    expect(variablesOf(fn)[EnvNames.serviceName]).toBe(basename(spec.entry, '.ts'));
  });

  it('maps stack traces to the TypeScript sources', () => {
    expect(variablesOf(fn).NODE_OPTIONS).toBe('--enable-source-maps');
  });
});

describe('variable values', () => {
  const withVariable = (name: string): FunctionName[] =>
    FUNCTION_NAMES.filter((fn) => FUNCTIONS[fn].env.includes(name));
  const tableVariables = [
    [EnvNames.storesTable, 'stores'],
    [EnvNames.dispatchTable, 'dispatch'],
    [EnvNames.tokensTable, 'tokens'],
    [EnvNames.deliveriesTable, 'deliveries'],
  ] as const;

  describe.each(tableVariables)('%s', (name, table) => {
    it.each(withVariable(name))(`is the ${table} table's name on %s`, (fn) => {
      expect(variablesOf(fn)[name]).toEqual({ Ref: logicalIdOf(stack.tables.all[table]) });
    });
  });

  it.each(withVariable(EnvNames.attentionQueueUrl))('the attention queue URL is its Ref on %s', (fn) => {
    expect(variablesOf(fn)[EnvNames.attentionQueueUrl]).toEqual({ Ref: logicalIdOf(stack.attention.queue) });
  });

  it.each(withVariable(EnvNames.confirmQueueUrl))('the confirm queue URL is its Ref on %s', (fn) => {
    expect(variablesOf(fn)[EnvNames.confirmQueueUrl]).toEqual({ Ref: logicalIdOf(stack.attention.confirm) });
  });

  it('only the worker gets the confirm queue URL (only a slice publishes to the confirm queue)', () => {
    expect(FUNCTION_NAMES.filter((fn) => EnvNames.confirmQueueUrl in variablesOf(fn))).toEqual(['worker']);
    expect(withVariable(EnvNames.confirmQueueUrl)).toEqual(['worker']);
  });

  it.each(withVariable(EnvNames.marketplaceBaseUrl))(
    'the marketplace base URL is the stack prop on %s',
    (fn) => {
      expect(variablesOf(fn)[EnvNames.marketplaceBaseUrl]).toBe(MARKETPLACE_BASE_URL);
    },
  );

  it.each(withVariable(EnvNames.usagePlanStage))(
    "the usage plan's stage is {restApiId}:{stage} of the API on %s (the plan's id would be a cycle)",
    (fn) => {
      expect(variablesOf(fn)[EnvNames.usagePlanStage]).toEqual({
        'Fn::Join': ['', [{ Ref: logicalIdOf(stack.httpApi.api) }, `:${API_STAGE_NAME}`]],
      });
    },
  );

  it.each(withVariable(EnvNames.queuePrefix))(
    `the queue prefix defaults to '${DEFAULT_QUEUE_PREFIX}' on %s`,
    (fn) => {
      expect(variablesOf(fn)[EnvNames.queuePrefix]).toBe(DEFAULT_QUEUE_PREFIX);
    },
  );
});
