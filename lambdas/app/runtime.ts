import { createAwsClients, type AwsClients } from '../adapters/aws-clients.js';
import { DynamoDispatchState } from '../adapters/dynamo-dispatch-state.js';
import { SqsAttentionPublisher, type AttentionQueueUrls } from '../adapters/sqs-attention-publisher.js';
import { PowertoolsTelemetry } from '../adapters/powertools-telemetry.js';
import { randomIds, systemClock } from '../adapters/system.js';
import { EnvNames } from '../config/env-names.js';
import type { FunctionName } from '../config/runtime-config.js';
import { FUNCTIONS } from '../config/topology.js';
import type { Context } from 'aws-lambda';
import type { HttpRequest, HttpResponse } from '../core/http.js';
import type { Clock, IdGenerator, Marketplace, Telemetry, TenantUsageKeys } from '../core/ports.js';
import type { SignalDeps } from '../core/signal.js';
import type { RedriveMode } from '../adapters/sqs-queue-admin.js';

/** What a composition root may be handed instead of the real thing (tests, local mode). */
export interface RuntimeOverrides {
  clients?: AwsClients;
  telemetry?: FlushableTelemetry;
  clock?: Clock;
  ids?: IdGenerator;
  marketplace?: Marketplace;
  random?: () => number;
  redriveMode?: RedriveMode;
  /** The tenant throttle identities (otherwise API Gateway's on AWS, derived ones in local mode). */
  usageKeys?: TenantUsageKeys;
}

/** Telemetry as a Lambda handler holds it: flushed after each invocation, told which invocation it serves. */
export type FlushableTelemetry = Telemetry & { flush?(): void; bindInvocation?(context: Context): void };

type CommonConfig = {
  [EnvNames.region]: string;
  [EnvNames.sqsEndpoint]?: string | undefined;
  [EnvNames.dynamoEndpoint]?: string | undefined;
};

export const clientsFor = (config: CommonConfig, overrides: RuntimeOverrides): AwsClients =>
  overrides.clients ??
  createAwsClients({
    region: config[EnvNames.region],
    sqsEndpoint: config[EnvNames.sqsEndpoint],
    dynamoEndpoint: config[EnvNames.dynamoEndpoint],
  });

/** The function's telemetry, named by the topology (as the stack names the service). */
export const telemetryFor = (fn: FunctionName, overrides: RuntimeOverrides): FlushableTelemetry =>
  overrides.telemetry ?? new PowertoolsTelemetry(FUNCTIONS[fn].serviceName);

type AttentionQueueConfig = {
  [EnvNames.attentionQueueUrl]: string;
  [EnvNames.attentionQueueUrlHigh]?: string | undefined;
  [EnvNames.attentionQueueUrlLow]?: string | undefined;
  /** The worker's only: where a slice hands an empty look (absent: no confirm queue). */
  [EnvNames.confirmQueueUrl]?: string | undefined;
};

/** Each level's attention queue; a level without its own (a deployment from before the levels) uses `normal`'s. */
export const attentionQueueUrls = (config: AttentionQueueConfig): AttentionQueueUrls => {
  const normal = config[EnvNames.attentionQueueUrl];
  return {
    high: config[EnvNames.attentionQueueUrlHigh] ?? normal,
    normal,
    low: config[EnvNames.attentionQueueUrlLow] ?? normal,
  };
};

/**
 * What every function that signals stores composes the same way: its clients, its telemetry and the
 * signalling ports built on them.
 */
export const composeSignalling = (
  fn: Exclude<FunctionName, 'authorizer'>,
  config: CommonConfig & { [EnvNames.dispatchTable]: string } & AttentionQueueConfig,
  overrides: RuntimeOverrides,
): { clients: AwsClients; signal: SignalDeps & { telemetry: FlushableTelemetry } } => {
  const clients = clientsFor(config, overrides);
  return {
    clients,
    signal: {
      dispatch: new DynamoDispatchState(clients.doc, config[EnvNames.dispatchTable]),
      attention: new SqsAttentionPublisher(
        clients.sqs,
        attentionQueueUrls(config),
        config[EnvNames.confirmQueueUrl],
      ),
      clock: overrides.clock ?? systemClock,
      ids: overrides.ids ?? randomIds,
      telemetry: telemetryFor(fn, overrides),
    },
  };
};

/**
 * Binds route use cases to the function's deps: each request runs its use case with the request's scoped
 * telemetry (createApiHandler's) in place of the function's own.
 */
export const routeOn =
  <D extends object>(deps: D) =>
  (useCase: (deps: D & { telemetry: Telemetry }, request: HttpRequest) => Promise<HttpResponse>) =>
  (request: HttpRequest, telemetry: Telemetry): Promise<HttpResponse> =>
    useCase({ ...deps, telemetry }, request);
