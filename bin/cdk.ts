#!/usr/bin/env node
import { App } from 'aws-cdk-lib';
import { AttentionQueueStack } from '../lib/attention-queue-stack.js';
import { applyNag } from '../lib/nag.js';
import { stackFromContext } from '../lib/stack-context.js';
import { InvalidPropError } from '../lib/validation.js';

// Environment-agnostic on purpose: the template names no account or region.
// Settings come from CDK context: `npx cdk deploy -c marketplaceBaseUrl=https://marketplace.example.com`.
const app = new App();
try {
  const { stackName, props } = stackFromContext(app.node);
  const stack = new AttentionQueueStack(app, stackName, {
    ...props,
    description: 'Attention Queue: per-tenant SQS queues without per-tenant consumers',
  });
  // cdk-nag (AwsSolutions, ServerlessChecks) at every synth: an unsuppressed finding is an error that
  // stops `cdk synth` and `cdk deploy`; the accepted ones are suppressed per resource in lib/nag.ts.
  applyNag(stack);
} catch (error) {
  // A bad setting is the operator's to fix: say what is wrong, without a stack trace.
  if (!(error instanceof InvalidPropError)) throw error;
  console.error(`error: ${error.message}`);
  process.exit(1);
}
