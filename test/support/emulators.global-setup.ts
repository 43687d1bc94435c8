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
  const [dynamo, sqs] = await Promise.all([startDynamoDbLocal(), startFauxqs()]);
  running = [dynamo, sqs];
  project.provide('dynamoEndpoint', dynamo.endpoint);
  project.provide('sqsEndpoint', sqs.endpoint);
  return async () => {
    await Promise.all(running.map((e) => e.stop()));
  };
}
