import { GetApiKeysCommand } from '@aws-sdk/client-api-gateway';
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { ReceiveMessageCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import type { NodeHttpHandler } from '@smithy/node-http-handler';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { CONFIRM_EVENT_SOURCE } from '../../../lambdas/config/topology.js';
import {
  CLIENT_SOCKETS,
  CLIENT_TIMEOUTS,
  createApiGatewayClient,
  createAwsClients,
  sqsRequestTimeoutMs,
} from '../../../lambdas/adapters/aws-clients.js';

describe('createAwsClients', () => {
  it('uses the configured region', async () => {
    const { sqs, dynamo } = createAwsClients({ region: 'eu-west-1' });
    await expect(Promise.all([sqs.config.region(), dynamo.config.region()])).resolves.toEqual([
      'eu-west-1',
      'eu-west-1',
    ]);
  });

  it('leaves the endpoints to the SDK on AWS', () => {
    const { sqs, dynamo } = createAwsClients({ region: 'us-east-1' });
    expect([sqs.config.isCustomEndpoint, dynamo.config.isCustomEndpoint]).toEqual([false, false]);
  });

  it('points SQS at the emulator endpoint', async () => {
    const { sqs } = createAwsClients({ region: 'us-east-1', sqsEndpoint: 'http://127.0.0.1:4566' });
    await expect(sqs.config.endpoint?.()).resolves.toMatchObject({ hostname: '127.0.0.1', port: 4566 });
  });

  it('points DynamoDB at the emulator endpoint', async () => {
    const { dynamo } = createAwsClients({ region: 'us-east-1', dynamoEndpoint: 'http://127.0.0.1:8000' });
    await expect(dynamo.config.endpoint?.()).resolves.toMatchObject({ hostname: '127.0.0.1', port: 8000 });
  });

  it('gives emulator clients static dummy credentials, so no real ones are looked up', async () => {
    const { sqs, dynamo } = createAwsClients({
      region: 'us-east-1',
      sqsEndpoint: 'http://127.0.0.1:4566',
      dynamoEndpoint: 'http://127.0.0.1:8000',
    });
    const creds = await Promise.all([sqs.config.credentials(), dynamo.config.credentials()]);
    expect(creds.map((c) => [c.accessKeyId, c.secretAccessKey])).toEqual([
      ['local', 'local'],
      ['local', 'local'],
    ]);
  });

  it('builds the document client on the DynamoDB client, dropping undefined attributes', () => {
    const { doc } = createAwsClients({ region: 'us-east-1' });
    expect(doc.config.translateConfig).toEqual({ marshallOptions: { removeUndefinedValues: true } });
  });
});

/** A port nothing listens on: every attempt is refused at once, which resolves the handler's settings. */
const CLOSED_ENDPOINT = 'http://127.0.0.1:1';

/** The settings a client's HTTP handler resolved (public NodeHttpHandler API; resolved on first use). */
const handlerSettings = (client: { config: { requestHandler: unknown } }) =>
  (client.config.requestHandler as NodeHttpHandler).httpHandlerConfigs();

describe('request timeouts (an SDK client has none by default)', () => {
  const clients = createAwsClients({
    region: 'us-east-1',
    sqsEndpoint: CLOSED_ENDPOINT,
    dynamoEndpoint: CLOSED_ENDPOINT,
  });
  beforeAll(async () => {
    await Promise.allSettled([
      clients.sqs.send(new SendMessageCommand({ QueueUrl: `${CLOSED_ENDPOINT}/1/q`, MessageBody: 'x' })),
      clients.dynamo.send(new GetItemCommand({ TableName: 't', Key: { k: { S: 'k' } } })),
    ]);
  });

  it.each([
    ['sqs', CLIENT_TIMEOUTS.sqsRequestTimeoutMs],
    ['dynamo', CLIENT_TIMEOUTS.dynamoRequestTimeoutMs],
  ] as const)('%s gives up on a request after its request timeout', (name, ms) => {
    expect(handlerSettings(clients[name]).requestTimeout).toBe(ms);
  });

  it.each(['sqs', 'dynamo'] as const)('%s gives up on connecting after the connection timeout', (name) => {
    expect(handlerSettings(clients[name]).connectionTimeout).toBe(CLIENT_TIMEOUTS.connectionTimeoutMs);
  });

  it.each(['sqs', 'dynamo'] as const)('%s fails the attempt on a timeout instead of only warning', (name) => {
    expect(handlerSettings(clients[name]).throwOnRequestTimeout).toBe(true);
  });

  it.each([
    ['sqs', CLIENT_SOCKETS.sqs],
    ['dynamo', CLIENT_SOCKETS.dynamo],
  ] as const)(
    '%s opens enough connections for a full confirm batch’s calls at once (not the SDK’s 50)',
    async (name, sockets) => {
      const config = handlerSettings(clients[name]) as {
        httpAgentProvider: () => Promise<{ maxSockets: number }>;
      };
      expect((await config.httpAgentProvider()).maxSockets).toBe(sockets);
      expect(sockets).toBeGreaterThanOrEqual(CONFIRM_EVENT_SOURCE.batchSize + 50);
    },
  );

  it('the API Gateway client gives up on a request after its request timeout', async () => {
    // Dummy credentials so the call gets as far as the HTTP handler.
    vi.stubEnv('AWS_ACCESS_KEY_ID', 'test');
    vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'test');
    const client = createApiGatewayClient('us-east-1');
    client.config.endpoint = () => Promise.resolve(new URL(CLOSED_ENDPOINT) as never);
    await client.send(new GetApiKeysCommand({})).catch(() => undefined);
    vi.unstubAllEnvs();
    expect(handlerSettings(client).requestTimeout).toBe(CLIENT_TIMEOUTS.apiGatewayRequestTimeoutMs);
  });
});

describe('SQS per-call timeout', () => {
  it('is the plain request timeout for a call without a long poll', () => {
    expect(sqsRequestTimeoutMs({ QueueUrl: 'q', MessageBody: 'x' })).toBe(
      CLIENT_TIMEOUTS.sqsRequestTimeoutMs,
    );
  });

  it('adds the wait of a long-polling receive', () => {
    expect(sqsRequestTimeoutMs({ QueueUrl: 'q', WaitTimeSeconds: 20 })).toBe(
      CLIENT_TIMEOUTS.sqsRequestTimeoutMs + 20_000,
    );
  });

  it('is handed to the HTTP handler with each receive', async () => {
    const { sqs } = createAwsClients({ region: 'us-east-1', sqsEndpoint: CLOSED_ENDPOINT });
    const handle = vi
      .spyOn(sqs.config.requestHandler as NodeHttpHandler, 'handle')
      .mockRejectedValue(Object.assign(new Error('stop'), { name: 'NotRetried' }));
    await sqs
      .send(new ReceiveMessageCommand({ QueueUrl: `${CLOSED_ENDPOINT}/1/q`, WaitTimeSeconds: 10 }))
      .catch(() => undefined);
    expect(handle.mock.calls[0]?.[1]).toMatchObject({
      requestTimeout: CLIENT_TIMEOUTS.sqsRequestTimeoutMs + 10_000,
    });
  });
});
