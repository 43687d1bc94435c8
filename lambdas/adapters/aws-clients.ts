import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';

export interface ClientSettings {
  region: string;
  /** Emulator endpoints (local mode and tests); unset on AWS. */
  sqsEndpoint?: string | undefined;
  dynamoEndpoint?: string | undefined;
}

export interface AwsClients {
  sqs: SQSClient;
  dynamo: DynamoDBClient;
  doc: DynamoDBDocumentClient;
}

/** Emulators accept any signature; static dummy credentials keep the SDK from searching for real ones. */
const EMULATOR_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' };

/** Built once per cold start by each handler's composition root. */
export const createAwsClients = (settings: ClientSettings): AwsClients => {
  const sqs = new SQSClient({
    region: settings.region,
    ...(settings.sqsEndpoint ? { endpoint: settings.sqsEndpoint, credentials: EMULATOR_CREDENTIALS } : {}),
  });
  const dynamo = new DynamoDBClient({
    region: settings.region,
    ...(settings.dynamoEndpoint
      ? { endpoint: settings.dynamoEndpoint, credentials: EMULATOR_CREDENTIALS }
      : {}),
  });
  const doc = DynamoDBDocumentClient.from(dynamo, { marshallOptions: { removeUndefinedValues: true } });
  return { sqs, dynamo, doc };
};
