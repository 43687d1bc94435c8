import {
  APIGatewayClient,
  DeleteApiKeyCommand,
  GetApiKeysCommand,
  NotFoundException,
} from '@aws-sdk/client-api-gateway';
import { ListQueuesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { findLeftovers, removeLeftovers } from '../../../bin/teardown/leftovers.js';
import { DEPLOYMENT_TAG_KEY } from '../../../lambdas/core/names.js';

const sqs = mockClient(SQSClient);
const apigw = mockClient(APIGatewayClient);
const clients = () => ({
  sqs: new SQSClient({ region: 'us-east-1' }),
  apiGateway: new APIGatewayClient({ region: 'us-east-1' }),
});

beforeEach(() => {
  sqs.reset();
  apigw.reset();
  sqs.on(ListQueuesCommand).resolves({ QueueUrls: [] });
});

describe('findLeftovers: tenant API keys', () => {
  beforeEach(() => {
    apigw.on(GetApiKeysCommand).resolves({
      items: [
        { id: 'k1', name: 'aq-tenant-a', tags: { [DEPLOYMENT_TAG_KEY]: 'aq' } },
        // Created before keys were tagged: the name alone says whose it is.
        { id: 'k2', name: 'aq-tenant-b' },
        // Tagged for another deployment (cannot happen with these names, but the tag decides).
        { id: 'k3', name: 'aq-tenant-c', tags: { [DEPLOYMENT_TAG_KEY]: 'other' } },
        // nameQuery matches anywhere in a name: another deployment's key can come back.
        { id: 'k4', name: 'xaq-tenant-d', tags: { [DEPLOYMENT_TAG_KEY]: 'xaq' } },
      ],
    });
  });

  it("lists the keys tagged with the deployment and its untagged keys, no one else's", async () => {
    const found = await findLeftovers(clients(), 'aq');
    expect(found.apiKeys.map((k) => k.id)).toEqual(['k1', 'k2']);
  });

  it('asks API Gateway for names starting with the deployment’s key prefix', async () => {
    await findLeftovers(clients(), 'aq');
    expect(apigw.commandCalls(GetApiKeysCommand)[0]?.args[0].input.nameQuery).toBe('aq-tenant-');
  });

  it('lists queues by the three store-queue name prefixes (work, DLQ, high-priority)', async () => {
    await findLeftovers(clients(), 'aq');
    expect(sqs.commandCalls(ListQueuesCommand).map((c) => c.args[0].input.QueueNamePrefix)).toEqual([
      'aq-s-',
      'aq-d-',
      'aq-h-',
    ]);
  });
});

describe('removeLeftovers', () => {
  it('counts a key already deleted as removed', async () => {
    apigw.on(DeleteApiKeyCommand).rejects(new NotFoundException({ message: 'gone', $metadata: {} }));
    await expect(
      removeLeftovers(
        clients(),
        { queueUrls: [], apiKeys: [{ id: 'k1', name: 'aq-tenant-a' }] },
        { keyPauseMs: 0 },
      ),
    ).resolves.toEqual({ queues: 0, apiKeys: 1 });
  });
});
