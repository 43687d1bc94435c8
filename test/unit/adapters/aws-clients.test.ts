import { describe, expect, it } from 'vitest';
import { createAwsClients } from '../../../lambdas/adapters/aws-clients.js';

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
