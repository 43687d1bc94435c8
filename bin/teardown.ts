#!/usr/bin/env node
import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { Command } from 'commander';
import { createApiGatewayClient, createAwsClients } from '../lambdas/adapters/aws-clients.js';
import { EnvNames } from '../lambdas/config/env-names.js';
import { QUEUE_PREFIX_PATTERN } from '../lambdas/core/names.js';
import { DEFAULT_QUEUE_PREFIX } from '../lib/attention-queue-stack.js';
import { DEFAULT_STACK_NAME } from '../lib/stack-context.js';
import { findLeftovers, removeLeftovers, type LeftoverClients } from './teardown/leftovers.js';

/**
 * `npm run teardown -- --prefix aq --region eu-west-1 [--yes]`: removes what `cdk destroy` leaves — the
 * store queues and DLQs and the tenant API keys created at run time. Without --yes it only lists them.
 * With AQ_SQS_ENDPOINT set it works on the local emulator (no API Gateway there).
 */
const program = new Command()
  .name('teardown')
  .description('Delete the store queues, store DLQs and tenant API keys a deployment created at run time')
  .option('--prefix <prefix>', 'the deployment’s queuePrefix', DEFAULT_QUEUE_PREFIX)
  .option('--region <region>', 'AWS region (default: AWS_REGION)')
  .option('--stack-name <name>', 'refuse while this CloudFormation stack still exists', DEFAULT_STACK_NAME)
  .option('--force', 'delete even though the stack still exists (its store queues stop working)', false)
  .option('--yes', 'delete; without it, only list', false)
  .parse();

const opts = program.opts<{
  prefix: string;
  region?: string;
  stackName: string;
  force: boolean;
  yes: boolean;
}>();

const stackExists = async (region: string, stackName: string): Promise<boolean> => {
  try {
    const out = await new CloudFormationClient({ region }).send(
      new DescribeStacksCommand({ StackName: stackName }),
    );
    return (out.Stacks ?? []).some((s) => s.StackStatus !== 'DELETE_COMPLETE');
  } catch (error) {
    if (/does not exist/.test((error as Error).message)) return false;
    throw error;
  }
};

const main = async (): Promise<void> => {
  if (!QUEUE_PREFIX_PATTERN.test(opts.prefix))
    throw new Error(`--prefix must match ${String(QUEUE_PREFIX_PATTERN)}`);
  const sqsEndpoint = process.env[EnvNames.sqsEndpoint];
  const region = opts.region ?? process.env[EnvNames.region] ?? (sqsEndpoint ? 'us-east-1' : undefined);
  if (!region) throw new Error('pass --region or set AWS_REGION');
  const local = sqsEndpoint !== undefined && sqsEndpoint !== '';
  if (!local && !opts.force && (await stackExists(region, opts.stackName))) {
    throw new Error(
      `stack ${opts.stackName} still exists in ${region}: run \`npx cdk destroy\` first (or pass --force)`,
    );
  }
  const clients: LeftoverClients = {
    sqs: createAwsClients({ region, sqsEndpoint }).sqs,
    ...(local ? {} : { apiGateway: createApiGatewayClient(region) }),
  };
  const leftovers = await findLeftovers(clients, opts.prefix);
  console.log(
    `deployment '${opts.prefix}' in ${local ? `the emulator at ${sqsEndpoint}` : region}: ${leftovers.queueUrls.length} store queues and DLQs, ${leftovers.apiKeys.length} tenant API keys`,
  );
  if (!opts.yes) {
    for (const url of leftovers.queueUrls) console.log(`  queue ${url}`);
    for (const key of leftovers.apiKeys) console.log(`  API key ${key.name} (${key.id})`);
    console.log('nothing deleted; pass --yes to delete them');
    return;
  }
  const removed = await removeLeftovers(clients, leftovers, { log: (line) => console.log(`  ${line}`) });
  console.log(`deleted ${removed.queues} queues and ${removed.apiKeys} API keys`);
};

main().catch((error: unknown) => {
  console.error(`error: ${(error as Error).message}`);
  process.exit(1);
});
