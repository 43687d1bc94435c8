import { spawnSync } from 'node:child_process';
import { CreateQueueCommand, ListQueuesCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { EnvNames } from '../../lambdas/config/env-names.js';
import { findLeftovers, removeLeftovers, type Leftovers } from '../../bin/teardown/leftovers.js';
import { startTestStack, type TestStack } from '../support/harness.js';

/**
 * Issue #12: `cdk destroy` leaves the store queues and DLQs the admin function created; teardown finds
 * them by the deployment's prefix and deletes them, and nothing of another deployment. Local mode: the
 * emulator's queues (there is no API Gateway locally, so no API keys).
 */
let t: TestStack;
let prefix: string;
const namesOf = (urls: readonly string[]) => urls.map((url) => url.slice(url.lastIndexOf('/') + 1)).sort();
const queuesWithPrefix = async (namePrefix: string): Promise<string[]> =>
  namesOf(
    (await t.stack.clients.sqs.send(new ListQueuesCommand({ QueueNamePrefix: namePrefix }))).QueueUrls ?? [],
  );

let found: Leftovers;
beforeAll(async () => {
  t = await startTestStack();
  prefix = t.stack.prefix;
  await t.createStore('shop-a', { tenantId: 'tenant-a', marketplace: 'm1', plan: 'basic' });
  await t.createStore('shop-b', { tenantId: 'tenant-b', marketplace: 'm1', plan: 'basic' });
  // Another deployment's store queue in the same account (prefix + 'x': prefixes contain no '-').
  await t.stack.clients.sqs.send(new CreateQueueCommand({ QueueName: `${prefix}x-s-shop-a` }));
  found = await findLeftovers({ sqs: t.stack.clients.sqs }, prefix);
}, 60_000);

afterAll(async () => {
  await t?.stop();
});

describe('teardown (local mode)', () => {
  it("finds every store's work queues (work, high-priority) and DLQ of the deployment", () => {
    expect(namesOf(found.queueUrls)).toEqual(
      [
        `${prefix}-d-shop-a`,
        `${prefix}-d-shop-b`,
        `${prefix}-h-shop-a`,
        `${prefix}-h-shop-b`,
        `${prefix}-s-shop-a`,
        `${prefix}-s-shop-b`,
      ].sort(),
    );
  });

  it('lists no API keys where there is no API Gateway', () => {
    expect(found.apiKeys).toEqual([]);
  });

  it('deletes them, leaving no store queue of the deployment', async () => {
    await removeLeftovers({ sqs: t.stack.clients.sqs }, found);
    expect([
      ...(await queuesWithPrefix(`${prefix}-s-`)),
      ...(await queuesWithPrefix(`${prefix}-d-`)),
      ...(await queuesWithPrefix(`${prefix}-h-`)),
    ]).toEqual([]);
  });

  it("leaves another deployment's queues alone", async () => {
    expect(await queuesWithPrefix(`${prefix}x-`)).toEqual([`${prefix}x-s-shop-a`]);
  });

  it("leaves the deployment's own attention queues (CloudFormation's on AWS) alone", async () => {
    expect((await queuesWithPrefix(`${prefix}-attention`)).length).toBeGreaterThan(0);
  });

  it('npm run teardown --yes removes them from the command line too', async () => {
    await t.createStore('shop-c', { tenantId: 'tenant-c', marketplace: 'm1', plan: 'basic' });
    const run = spawnSync('npx', ['tsx', 'bin/teardown.ts', '--prefix', prefix, '--yes'], {
      encoding: 'utf8',
      env: { ...process.env, [EnvNames.sqsEndpoint]: inject('sqsEndpoint'), AWS_REGION: 'us-east-1' },
      timeout: 60_000,
    });
    expect({ status: run.status, left: await queuesWithPrefix(`${prefix}-s-`) }).toEqual({
      status: 0,
      left: [],
    });
  });
});
