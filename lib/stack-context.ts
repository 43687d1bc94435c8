import { RemovalPolicy } from 'aws-cdk-lib';
import type { Node } from 'constructs';
import type { AttentionQueueStackProps } from './attention-queue-stack.js';
import type { AdminAccess } from './constructs/http-api.js';
import type { AlarmThresholds } from './constructs/monitoring.js';
import { InvalidPropError } from './validation.js';
import type { PriorityShares } from '../lambdas/core/priority-shares.js';
import { prioritySharesFromText } from './priority-concurrency.js';

/** Context keys `bin/cdk.ts` reads (`cdk deploy -c marketplaceBaseUrl=https://… -c workerPoolSize=50`). */
const ContextKeys = {
  stackName: 'stackName',
  marketplaceBaseUrl: 'marketplaceBaseUrl',
  queuePrefix: 'queuePrefix',
  workerPoolSize: 'workerPoolSize',
  workerBatchSize: 'workerBatchSize',
  workerPoolShares: 'workerPoolShares',
  workerPoolBurst: 'workerPoolBurst',
  workerPoolLoans: 'workerPoolLoans',
  removalPolicy: 'removalPolicy',
  apiRateLimit: 'apiRateLimit',
  apiBurstLimit: 'apiBurstLimit',
  tracing: 'tracing',
  apiCloudWatchRole: 'apiCloudWatchRole',
  adminAccess: 'adminAccess',
  accountConcurrencyLimit: 'accountConcurrencyLimit',
  alarmEmail: 'alarmEmail',
  alarmThresholds: 'alarmThresholds',
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

/** `50,30,20` (high, normal, low) or `high=50,normal=30,low=20`. */
const optionalShares = (node: Node): PriorityShares | undefined => {
  const raw = optionalString(node, ContextKeys.workerPoolShares);
  return raw === undefined
    ? undefined
    : prioritySharesFromText(`context ${ContextKeys.workerPoolShares}`, raw);
};

/** `account`, or principal ARNs separated by commas. */
const optionalAdminAccess = (node: Node): AdminAccess | undefined => {
  const raw = optionalString(node, ContextKeys.adminAccess);
  if (raw === undefined) return undefined;
  if (raw === 'account') return 'account';
  return raw
    .split(',')
    .map((arn) => arn.trim())
    .filter((arn) => arn !== '');
};

/** A JSON object of numbers (`-c alarmThresholds='{"apiLatencyP99Ms":3000}'`), or that object in cdk.json. */
const optionalThresholds = (node: Node): Partial<AlarmThresholds> | undefined => {
  const value: unknown = node.tryGetContext(ContextKeys.alarmThresholds);
  if (value === undefined || value === null || value === '') return undefined;
  let parsed: unknown = value;
  if (typeof value === 'string') {
    try {
      parsed = JSON.parse(value);
    } catch {
      throw new InvalidPropError(
        `context ${ContextKeys.alarmThresholds} must be a JSON object of numbers; got '${value}'`,
      );
    }
  }
  if (
    typeof parsed !== 'object' ||
    parsed === null ||
    Array.isArray(parsed) ||
    !Object.values(parsed).every((v) => typeof v === 'number')
  ) {
    throw new InvalidPropError(`context ${ContextKeys.alarmThresholds} must be a JSON object of numbers`);
  }
  // The stack names an unknown field and range-checks each value.
  return parsed as Partial<AlarmThresholds>;
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
      workerBatchSize: optionalNumber(node, ContextKeys.workerBatchSize),
      workerPoolShares: optionalShares(node),
      workerPoolBurst: optionalNumber(node, ContextKeys.workerPoolBurst),
      workerPoolLoans: optionalBoolean(node, ContextKeys.workerPoolLoans),
      removalPolicy,
      apiThrottling: {
        rateLimit: optionalNumber(node, ContextKeys.apiRateLimit),
        burstLimit: optionalNumber(node, ContextKeys.apiBurstLimit),
      },
      tracing: optionalBoolean(node, ContextKeys.tracing),
      apiCloudWatchRole: optionalBoolean(node, ContextKeys.apiCloudWatchRole),
      adminAccess: optionalAdminAccess(node),
      accountConcurrencyLimit: optionalNumber(node, ContextKeys.accountConcurrencyLimit),
      alarmEmail: optionalString(node, ContextKeys.alarmEmail),
      alarmThresholds: optionalThresholds(node),
    },
  };
};
