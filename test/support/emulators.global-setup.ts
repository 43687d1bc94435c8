import type { TestProject } from 'vitest/node';
import { startDynamoDbLocal, startFauxqs, type Emulator } from '../../bin/local/emulators.js';

declare module 'vitest' {
  export interface ProvidedContext {
    dynamoEndpoint: string;
    sqsEndpoint: string;
  }
}

let running: Emulator[] = [];

/** Starts the real emulators once for the integration project (DynamoDB Local needs Java 17). */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const started = await Promise.allSettled([startDynamoDbLocal(), startFauxqs()]);
  running = started.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
  const failed = started.find((result) => result.status === 'rejected');
  if (failed) {
    // Stop the one that did start: a live emulator would keep vitest from exiting after the failed setup.
    await Promise.all(running.map((e) => e.stop()));
    throw failed.reason;
  }
  const [dynamo, sqs] = running as [Emulator, Emulator];
  project.provide('dynamoEndpoint', dynamo.endpoint);
  project.provide('sqsEndpoint', sqs.endpoint);
  return async () => {
    await Promise.all(running.map((e) => e.stop()));
  };
}
