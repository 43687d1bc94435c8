import type { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import { Stack } from 'aws-cdk-lib';
import type { CfnFunction } from 'aws-cdk-lib/aws-lambda';
import { InvalidPropError, requireIntegerInRange } from './validation.js';

/** Lambda's default concurrency quota per account and region (new accounts may be given less). */
export const DEFAULT_ACCOUNT_CONCURRENCY_LIMIT = 1000;
/** Lambda refuses a reservation that leaves fewer unreserved executions than this. */
export const MIN_UNRESERVED_CONCURRENCY = 100;

/** The concurrency the functions reserve, summed from their CloudFormation resources. */
export const reservedConcurrency = (functions: Readonly<Record<string, LambdaFunction>>): number =>
  Object.values(functions).reduce((sum, fn) => {
    const cfn = fn.node.defaultChild as CfnFunction;
    const reserved = Stack.of(fn).resolve(cfn.reservedConcurrentExecutions) as number | undefined;
    return sum + (reserved ?? 0);
  }, 0);

/**
 * Fails synth, with the numbers and the fix, when the stack's reserved concurrency would leave the account
 * fewer than MIN_UNRESERVED_CONCURRENCY unreserved executions: otherwise the deployment fails half-way on
 * the first function whose reservation Lambda refuses, with a message that names neither.
 */
export const requireConcurrencyFits = (
  functions: Readonly<Record<string, LambdaFunction>>,
  accountLimit = DEFAULT_ACCOUNT_CONCURRENCY_LIMIT,
): void => {
  requireIntegerInRange('accountConcurrencyLimit', accountLimit, 1, 10_000_000);
  const reserved = reservedConcurrency(functions);
  if (reserved + MIN_UNRESERVED_CONCURRENCY > accountLimit) {
    throw new InvalidPropError(
      `the stack reserves ${reserved} concurrent executions (worker pool, its loans and the confirm queue's invocations, + reconciler), and Lambda requires ${MIN_UNRESERVED_CONCURRENCY} to stay unreserved, so it needs an account concurrency limit of at least ${reserved + MIN_UNRESERVED_CONCURRENCY}; accountConcurrencyLimit is ${accountLimit}. Lower workerPoolSize (the confirm queue's CONFIRM_EVENT_SOURCE.maxConcurrency is fixed), or raise the quota (Service Quotas: Lambda "Concurrent executions") and pass -c accountConcurrencyLimit=<new limit>`,
    );
  }
};
