import { RemovalPolicy } from 'aws-cdk-lib';
import type { Node } from 'constructs';
import type { AttentionQueueStackProps } from './attention-queue-stack.js';
import { InvalidPropError } from './validation.js';

/** Context keys `bin/cdk.ts` reads (`cdk deploy -c marketplaceBaseUrl=https://… -c workerPoolSize=50`). */
const ContextKeys = {
  stackName: 'stackName',
  marketplaceBaseUrl: 'marketplaceBaseUrl',
  queuePrefix: 'queuePrefix',
  workerPoolSize: 'workerPoolSize',
  removalPolicy: 'removalPolicy',
  apiRateLimit: 'apiRateLimit',
  apiBurstLimit: 'apiBurstLimit',
  apiTracing: 'apiTracing',
  alarmEmail: 'alarmEmail',
} as const;

export const DEFAULT_STACK_NAME = 'AttentionQueue';

const REMOVAL_POLICIES: Readonly<Record<string, RemovalPolicy>> = {
  retain: RemovalPolicy.RETAIN,
  destroy: RemovalPolicy.DESTROY,
};

// `-c key=value` always yields strings; cdk.json may hold numbers or booleans.
const optionalString = (node: Node, key: string): string | undefined => {
  const value: unknown = node.tryGetContext(key);
  if (value === undefined || value === null || value === '') return undefined;
  return String(value);
};

const optionalNumber = (node: Node, key: string): number | undefined => {
  const raw = optionalString(node, key);
  if (raw === undefined) return undefined;
  const value = Number(raw);
  if (!Number.isFinite(value)) throw new InvalidPropError(`context ${key} must be a number; got '${raw}'`);
  return value;
};

const optionalBoolean = (node: Node, key: string): boolean | undefined => {
  const raw = optionalString(node, key);
  if (raw === undefined) return undefined;
  if (raw !== 'true' && raw !== 'false')
    throw new InvalidPropError(`context ${key} must be true or false; got '${raw}'`);
  return raw === 'true';
};

export interface StackFromContext {
  readonly stackName: string;
  readonly props: AttentionQueueStackProps;
}

/** Reads the stack's props from CDK context; the stack itself validates their values. */
export const stackFromContext = (node: Node): StackFromContext => {
  const marketplaceBaseUrl = optionalString(node, ContextKeys.marketplaceBaseUrl);
  if (marketplaceBaseUrl === undefined) {
    throw new InvalidPropError(
      `missing context ${ContextKeys.marketplaceBaseUrl}: pass -c ${ContextKeys.marketplaceBaseUrl}=https://marketplace.example.com`,
    );
  }
  const removal = optionalString(node, ContextKeys.removalPolicy);
  const removalPolicy = removal === undefined ? undefined : REMOVAL_POLICIES[removal];
  if (removal !== undefined && removalPolicy === undefined) {
    throw new InvalidPropError(
      `context ${ContextKeys.removalPolicy} must be one of ${Object.keys(REMOVAL_POLICIES).join(', ')}; got '${removal}'`,
    );
  }
  return {
    stackName: optionalString(node, ContextKeys.stackName) ?? DEFAULT_STACK_NAME,
    props: {
      marketplaceBaseUrl,
      queuePrefix: optionalString(node, ContextKeys.queuePrefix),
      workerPoolSize: optionalNumber(node, ContextKeys.workerPoolSize),
      removalPolicy,
      apiThrottling: {
        rateLimit: optionalNumber(node, ContextKeys.apiRateLimit),
        burstLimit: optionalNumber(node, ContextKeys.apiBurstLimit),
      },
      apiTracingEnabled: optionalBoolean(node, ContextKeys.apiTracing),
      alarmEmail: optionalString(node, ContextKeys.alarmEmail),
    },
  };
};
