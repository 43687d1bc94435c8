import { DescribeTableCommand, DescribeTimeToLiveCommand } from '@aws-sdk/client-dynamodb';
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EnvNames } from '../../lambdas/config/env-names.js';
import { FunctionEnv, type FunctionName } from '../../lambdas/config/runtime-config.js';
import { OPENAPI_PATH } from '../../lambdas/core/openapi/document.js';
import { matchRoute } from '../../lambdas/core/routes.js';
import {
  resourceById,
  resourcesOfType,
  synthStack,
  logicalIdOf,
  type TemplateResource,
} from '../infra/synth-stack.js';
import { DEPLOYED_ONLY, RUNTIME_DEFAULTED } from '../../lib/function-environment.js';
import { startTestStack, type TestStack } from '../support/harness.js';

/**
 * Local mode and the deployed stack are built from one topology; this test compares what each actually
 * made — the synthesized template on one side, the tables, queues, environment and routes local mode
 * created on the emulators on the other — so the two cannot drift.
 */
const { stack, template } = synthStack();
const LOCAL_ONLY = new Set<string>([EnvNames.sqsEndpoint, EnvNames.dynamoEndpoint, EnvNames.region]);
const FUNCTION_NAMES = Object.keys(FunctionEnv) as FunctionName[];

const templateEnv = (fn: FunctionName): Record<string, unknown> =>
  (
    resourceById(template, logicalIdOf(stack.functions[fn])).Properties?.['Environment'] as {
      Variables: Record<string, unknown>;
    }
  ).Variables;

/** The resource a `{ Ref }` or `{ Fn::GetAtt }` env value points at. */
const referenced = (value: unknown): TemplateResource => {
  const v = value as { Ref?: string; 'Fn::GetAtt'?: [string, string] };
  const id = v.Ref ?? v['Fn::GetAtt']?.[0];
  if (!id) throw new Error(`not a reference: ${JSON.stringify(value)}`);
  return resourceById(template, id);
};

interface KeyShape {
  keys: string[];
  attributes: string[];
  indexes: string[];
  ttl: string | undefined;
}

const sortStrings = (xs: string[]) => [...xs].sort();

const templateTableShape = (table: TemplateResource): KeyShape => {
  const p = table.Properties as {
    KeySchema: { AttributeName: string; KeyType: string }[];
    AttributeDefinitions: { AttributeName: string; AttributeType: string }[];
    GlobalSecondaryIndexes?: {
      IndexName: string;
      KeySchema: { AttributeName: string; KeyType: string }[];
      Projection: { ProjectionType: string };
    }[];
    TimeToLiveSpecification?: { AttributeName: string; Enabled: boolean };
  };
  return {
    keys: p.KeySchema.map((k) => `${k.AttributeName}:${k.KeyType}`),
    attributes: sortStrings(p.AttributeDefinitions.map((a) => `${a.AttributeName}:${a.AttributeType}`)),
    indexes: sortStrings(
      (p.GlobalSecondaryIndexes ?? []).map(
        (g) =>
          `${g.IndexName}(${g.KeySchema.map((k) => `${k.AttributeName}:${k.KeyType}`).join(',')})/${g.Projection.ProjectionType}`,
      ),
    ),
    ttl: p.TimeToLiveSpecification?.Enabled ? p.TimeToLiveSpecification.AttributeName : undefined,
  };
};

describe('local mode is wired like the synthesized stack', () => {
  let t: TestStack;

  beforeAll(async () => {
    t = await startTestStack();
  });
  afterAll(async () => {
    await t?.stop();
  });

  it('wires a handler for every function the stack deploys', () => {
    expect(sortStrings(Object.keys(t.stack.handlers))).toEqual(sortStrings(Object.keys(stack.functions)));
  });

  it.each(FUNCTION_NAMES)('gives the %s function the wiring variables the stack sets', (fn) => {
    const wiring = (names: string[]) =>
      sortStrings(
        names.filter(
          (name) =>
            !LOCAL_ONLY.has(name) &&
            !RUNTIME_DEFAULTED.includes(name as never) &&
            !DEPLOYED_ONLY.includes(name as never),
        ),
      );
    const deployed = wiring(
      Object.keys(templateEnv(fn)).filter((name) => FunctionEnv[fn].includes(name as never)),
    );
    const local = wiring(FunctionEnv[fn].filter((name) => t.stack.env[name] !== undefined));
    expect(local).toEqual(deployed);
  });

  it.each(
    FUNCTION_NAMES.flatMap((fn) =>
      DEPLOYED_ONLY.filter((name) => FunctionEnv[fn].includes(name as never)).map(
        (name) => [name, fn] as const,
      ),
    ),
  )('sets %s on the deployed %s function only (local mode uses its in-process stand-in)', (name, fn) => {
    expect(templateEnv(fn)[name]).toBeDefined();
    expect(t.stack.env[name]).toBeUndefined();
  });

  it.each([
    [EnvNames.storesTable, 'admin'],
    [EnvNames.dispatchTable, 'admin'],
    [EnvNames.tokensTable, 'admin'],
    [EnvNames.deliveriesTable, 'worker'],
  ] as const)('creates the table behind %s with the keys, indexes and TTL of the stack', async (name, fn) => {
    const deployed = templateTableShape(referenced(templateEnv(fn)[name]));
    const tableName = t.stack.env[name] as string;
    const [{ Table: table }, ttl] = await Promise.all([
      t.stack.clients.dynamo.send(new DescribeTableCommand({ TableName: tableName })),
      t.stack.clients.dynamo.send(new DescribeTimeToLiveCommand({ TableName: tableName })),
    ]);
    const local: KeyShape = {
      keys: (table?.KeySchema ?? []).map((k) => `${k.AttributeName}:${k.KeyType}`),
      attributes: sortStrings(
        (table?.AttributeDefinitions ?? []).map((a) => `${a.AttributeName}:${a.AttributeType}`),
      ),
      indexes: sortStrings(
        (table?.GlobalSecondaryIndexes ?? []).map(
          (g) =>
            `${g.IndexName}(${(g.KeySchema ?? []).map((k) => `${k.AttributeName}:${k.KeyType}`).join(',')})/${g.Projection?.ProjectionType}`,
        ),
      ),
      ttl:
        ttl.TimeToLiveDescription?.TimeToLiveStatus === 'ENABLED'
          ? ttl.TimeToLiveDescription.AttributeName
          : undefined,
    };
    expect(local).toEqual(deployed);
  });

  it('creates the attention queue with the visibility, retention and redrive of the stack', async () => {
    const deployed = referenced(templateEnv('worker')[EnvNames.attentionQueueUrl]).Properties as {
      VisibilityTimeout: number;
      MessageRetentionPeriod: number;
      RedrivePolicy: { maxReceiveCount: number };
    };
    const out = await t.stack.clients.sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: t.stack.resources.attentionQueueUrl,
        AttributeNames: ['All'],
      }),
    );
    const attrs = out.Attributes ?? {};
    expect({
      visibility: Number(attrs.VisibilityTimeout),
      retention: Number(attrs.MessageRetentionPeriod),
      maxReceiveCount: Number(
        (JSON.parse(attrs.RedrivePolicy ?? '{}') as { maxReceiveCount?: number }).maxReceiveCount,
      ),
    }).toEqual({
      visibility: deployed.VisibilityTimeout,
      retention: deployed.MessageRetentionPeriod,
      maxReceiveCount: deployed.RedrivePolicy.maxReceiveCount,
    });
  });

  it("polls the attention queue like the stack's event source: same batch size, partial batch failures", () => {
    const [[, mapping] = []] = resourcesOfType(template, 'AWS::Lambda::EventSourceMapping');
    const props = mapping?.Properties as { BatchSize: number; FunctionResponseTypes: string[] };
    expect(t.stack.eventSource.options.batchSize).toBe(props.BatchSize);
    expect(props.FunctionResponseTypes).toEqual(['ReportBatchItemFailures']);
  });

  it('serves every API method of the template on the same path with the same kind of auth', () => {
    const resources = Object.fromEntries(resourcesOfType(template, 'AWS::ApiGateway::Resource'));
    const pathOf = (ref: { Ref?: string }): string => {
      const parts: string[] = [];
      while (ref.Ref !== undefined) {
        const resource = resources[ref.Ref];
        parts.unshift(String(resource?.Properties?.['PathPart']));
        ref = resource?.Properties?.['ParentId'] as { Ref?: string };
      }
      return `/${parts.join('/')}`;
    };
    const AUTH = { CUSTOM: 'tenant', AWS_IAM: 'iam', NONE: 'none' } as const;
    const deployed = resourcesOfType(template, 'AWS::ApiGateway::Method')
      .map(
        ([, m]) =>
          m.Properties as {
            HttpMethod: string;
            ResourceId: { Ref: string };
            AuthorizationType: keyof typeof AUTH;
          },
      )
      .filter((m) => m.HttpMethod !== 'ANY')
      .map((m) => {
        const concrete = pathOf(m.ResourceId).replace(/\{[^}]+\}/g, 'x');
        const match = matchRoute(m.HttpMethod, concrete);
        return {
          method: m.HttpMethod,
          auth: AUTH[m.AuthorizationType],
          // GET /openapi.json is served by local mode's server itself, unauthenticated as on AWS.
          local: concrete === OPENAPI_PATH ? 'none' : match.kind === 'match' ? match.route.auth : match.kind,
        };
      });
    expect(deployed.length).toBeGreaterThan(0);
    expect(deployed.filter((d) => d.local !== d.auth)).toEqual([]);
  });
});
