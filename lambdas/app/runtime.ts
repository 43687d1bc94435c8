import { createAwsClients, type AwsClients } from '../adapters/aws-clients.js';
import { DynamoDispatchState } from '../adapters/dynamo-dispatch-state.js';
import { SqsAttentionPublisher } from '../adapters/sqs-attention-publisher.js';
import { PowertoolsTelemetry } from '../adapters/powertools-telemetry.js';
import { randomIds, systemClock } from '../adapters/system.js';
import { EnvNames } from '../config/env-names.js';
import { FUNCTIONS } from '../config/topology.js';
import type { Context } from 'aws-lambda';
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

export const telemetryFor = (service: string, overrides: RuntimeOverrides): FlushableTelemetry =>
  overrides.telemetry ?? new PowertoolsTelemetry(service);

export const signalDepsFor = (
  config: CommonConfig & { [EnvNames.dispatchTable]: string; [EnvNames.attentionQueueUrl]: string },
  clients: AwsClients,
  telemetry: FlushableTelemetry,
  overrides: RuntimeOverrides,
): SignalDeps & { telemetry: FlushableTelemetry } => ({
  dispatch: new DynamoDispatchState(clients.doc, config[EnvNames.dispatchTable]),
  attention: new SqsAttentionPublisher(clients.sqs, config[EnvNames.attentionQueueUrl]),
  clock: overrides.clock ?? systemClock,
  ids: overrides.ids ?? randomIds,
  telemetry,
});

/**
 * What every function that signals stores composes the same way: its clients, its telemetry (named by
 * the topology, as the stack names it) and the signalling ports built on them.
 */
export const composeSignalling = (
  fn: 'ingest' | 'admin' | 'worker' | 'reconciler',
  config: CommonConfig & { [EnvNames.dispatchTable]: string; [EnvNames.attentionQueueUrl]: string },
  overrides: RuntimeOverrides,
): { clients: AwsClients; signal: SignalDeps & { telemetry: FlushableTelemetry } } => {
  const clients = clientsFor(config, overrides);
  const telemetry = telemetryFor(FUNCTIONS[fn].serviceName, overrides);
  return { clients, signal: signalDepsFor(config, clients, telemetry, overrides) };
};
