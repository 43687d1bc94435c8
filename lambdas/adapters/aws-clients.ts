import { APIGatewayClient } from '@aws-sdk/client-api-gateway';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { LambdaClient } from '@aws-sdk/client-lambda';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { CONFIRM_EVENT_SOURCE } from '../config/topology.js';
import { traced } from './tracing.js';

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

/**
 * Per-attempt limits of every AWS SDK client. The SDK's own default is no request timeout at all: a
 * connection that stalls would hold a worker's lease, an ingest request or an admin request until the
 * Lambda timeout, instead of failing an attempt and letting the SDK retry (3 attempts, standard mode).
 * `throwOnRequestTimeout` matters: without it the handler only logs a warning and keeps waiting.
 */
export const CLIENT_TIMEOUTS = {
  /** TCP + TLS set-up inside one region. */
  connectionTimeoutMs: 1_000,
  /** DynamoDB answers single-item calls in milliseconds; a page of a query or scan well within this. */
  dynamoRequestTimeoutMs: 3_000,
  /** SQS calls without a long poll. A long poll (ReceiveMessage WaitTimeSeconds) gets its wait on top. */
  sqsRequestTimeoutMs: 5_000,
  /** API Gateway's control plane (API keys, usage plans) is slower than the data planes. */
  apiGatewayRequestTimeoutMs: 5_000,
  /** Lambda's control plane (the levels' event source mappings, read and updated by the reconciler). */
  lambdaRequestTimeoutMs: 5_000,
} as const;

/**
 * Connections per client (the SDK's default is 50). A confirm invocation runs up to CONFIRM_EVENT_SOURCE.batchSize
 * slices at once, each with two long polls side by side (the high and the work queue): on 50 sockets the polls
 * would run in waves, and a request's timeout counts its wait for a socket, so later waves would time out as
 * errors. SQS gets room for every poll of a full batch; DynamoDB for every slice's write at once.
 */
export const CLIENT_SOCKETS = {
  sqs: 2 * CONFIRM_EVENT_SOURCE.batchSize + 50,
  dynamo: CONFIRM_EVENT_SOURCE.batchSize + 50,
} as const;

const requestHandler = (requestTimeout: number, maxSockets = 50) => ({
  connectionTimeout: CLIENT_TIMEOUTS.connectionTimeoutMs,
  requestTimeout,
  throwOnRequestTimeout: true,
  httpAgent: { maxSockets },
  httpsAgent: { maxSockets },
});

/** The request timeout of one SQS call: a long poll may legitimately last its WaitTimeSeconds. */
export const sqsRequestTimeoutMs = (input: unknown): number => {
  const wait = (input as { WaitTimeSeconds?: unknown } | undefined)?.WaitTimeSeconds;
  return CLIENT_TIMEOUTS.sqsRequestTimeoutMs + (typeof wait === 'number' && wait > 0 ? wait * 1000 : 0);
};

/** What `send` accepts as its second argument (the SDK's HttpHandlerOptions), as far as this file uses it. */
interface HttpHandlerOptions {
  requestTimeout?: number;
}

/**
 * SQS with a per-call request timeout: short for sends and deletes, the wait plus the same margin for a
 * long-polling ReceiveMessage. The SDK takes a per-call `requestTimeout` only as `send`'s second argument,
 * so `send` is wrapped here, once, rather than at every call site; an explicit option still wins.
 */
const sqsWithTimeouts = (sqs: SQSClient): SQSClient => {
  const send = sqs.send.bind(sqs) as (command: unknown, options?: HttpHandlerOptions) => Promise<unknown>;
  sqs.send = ((command: { input?: unknown }, options?: HttpHandlerOptions) =>
    send(command, { requestTimeout: sqsRequestTimeoutMs(command.input), ...options })) as SQSClient['send'];
  return sqs;
};

/** Emulators accept any signature; static dummy credentials keep the SDK from searching for real ones. */
const EMULATOR_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' };

/** Built once per cold start by each handler's composition root. */
export const createAwsClients = (settings: ClientSettings): AwsClients => {
  const sqs = new SQSClient({
    region: settings.region,
    requestHandler: requestHandler(CLIENT_TIMEOUTS.sqsRequestTimeoutMs, CLIENT_SOCKETS.sqs),
    ...(settings.sqsEndpoint ? { endpoint: settings.sqsEndpoint, credentials: EMULATOR_CREDENTIALS } : {}),
  });
  const dynamo = new DynamoDBClient({
    region: settings.region,
    requestHandler: requestHandler(CLIENT_TIMEOUTS.dynamoRequestTimeoutMs, CLIENT_SOCKETS.dynamo),
    ...(settings.dynamoEndpoint
      ? { endpoint: settings.dynamoEndpoint, credentials: EMULATOR_CREDENTIALS }
      : {}),
  });
  // The document client sends through `dynamo`, so tracing that one records both.
  const tracedDynamo = traced(dynamo);
  const doc = DynamoDBDocumentClient.from(tracedDynamo, { marshallOptions: { removeUndefinedValues: true } });
  return { sqs: traced(sqsWithTimeouts(sqs)), dynamo: tracedDynamo, doc };
};

/** The admin function's API Gateway client (tenant API keys), with the same limits and tracing. */
export const createApiGatewayClient = (region: string): APIGatewayClient =>
  traced(
    new APIGatewayClient({
      region,
      requestHandler: requestHandler(CLIENT_TIMEOUTS.apiGatewayRequestTimeoutMs),
    }),
  );

/** The reconciler's Lambda client (store priority on AWS: the levels' event source caps), same limits, traced. */
export const createLambdaClient = (region: string): LambdaClient =>
  traced(
    new LambdaClient({
      region,
      requestHandler: requestHandler(CLIENT_TIMEOUTS.lambdaRequestTimeoutMs),
    }),
  );
