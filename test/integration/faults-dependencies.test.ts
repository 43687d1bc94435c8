import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { inventoryTasks, sleep, startTestStack, waitFor, type TestStack } from '../support/harness.js';
import { startFaultProxy, type FaultProxy } from '../support/fault-proxy.js';

/**
 * Issue #3, "dependencies down": SQS or DynamoDB unreachable for 5 s mid-run (a proxy in front of the
 * emulator drops and refuses connections; the emulator keeps its state). Ingest answers 503 with nothing
 * accepted, workers back off and resume, and every accepted task is delivered exactly once.
 */
describe('dependencies down', () => {
  let t: TestStack;
  let sqsProxy: FaultProxy;
  let dynamoProxy: FaultProxy;
  let token: string;
  const accepted = new Set<string>();
  const refused = new Set<string>();

  const post = async (storeId: string, eventId: string) => {
    const res = await t.request('POST', `/v1/stores/${storeId}/tasks`, {
      token,
      body: { eventId, type: 'inventory.update', payload: { sku: 'A', quantity: 1 } },
    });
    (res.status === 202 ? accepted : refused).add(`${storeId}:${eventId}`);
    return res;
  };

  beforeAll(async () => {
    [sqsProxy, dynamoProxy] = await Promise.all([
      startFaultProxy(inject('sqsEndpoint')),
      startFaultProxy(inject('dynamoEndpoint')),
    ]);
    t = await startTestStack({ endpoints: { sqs: sqsProxy.url, dynamo: dynamoProxy.url } });
    token = await t.tokenFor('acme');
    for (const id of ['dep-a', 'dep-b'])
      await t.createStore(id, {
        tenantId: 'acme',
        marketplace: 'amazon',
        plan: 'basic',
        overrides: { ratePerSecond: 20 },
      });
  });
  afterAll(async () => {
    sqsProxy?.up();
    dynamoProxy?.up();
    await t?.stop();
    await Promise.all([sqsProxy?.close(), dynamoProxy?.close()]);
  });

  it.each([
    ['SQS', () => sqsProxy],
    ['DynamoDB', () => dynamoProxy],
  ])(
    '%s down for 5 s: 503 with nothing accepted, then every accepted task is delivered once',
    async (name, proxy) => {
      const tag = name.toLowerCase();
      await t.submitMany('dep-a', token, inventoryTasks(`${tag}-before`, 40));
      for (let i = 0; i < 40; i++) accepted.add(`dep-a:${tag}-before-${i}`);
      proxy().down();
      const during = await post('dep-b', `${tag}-during`);
      await sleep(5_000);
      proxy().up();
      expect(during.status).toBe(503);
      expect((during.body as { error: { code: string } }).error.code).toBe('dependency_unavailable');
      expect((await post('dep-b', `${tag}-after`)).status).toBe(202);
      await waitFor(
        `every accepted task delivered after the ${name} outage`,
        () => [...accepted].every((key) => t.marketplace.effects.has(key)),
        60_000,
      );
      await sleep(1_000);
      expect([...refused].filter((key) => t.marketplace.calls.some((c) => c.idempotencyKey === key))).toEqual(
        [],
      );
      expect([...accepted].filter((key) => t.marketplace.effects.get(key) !== 1)).toEqual([]);
    },
  );
});
