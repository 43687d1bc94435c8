import { StackOutputs } from '../../lambdas/config/stack-outputs.js';
import { CliError } from './errors.js';

export const DEFAULT_ENDPOINT = 'http://localhost:3000';

/** The stack's outputs by key (the CloudFormation call, injectable for tests). */
export type StackOutputReader = (stackName: string) => Promise<Record<string, string>>;

/**
 * DescribeStacks through the CloudFormation client, loaded only for `--stack` (local-mode commands then
 * start without the AWS SDK).
 */
export const cloudFormationOutputs: StackOutputReader = async (stackName) => {
  const { CloudFormationClient, DescribeStacksCommand } = await import('@aws-sdk/client-cloudformation');
  let stacks;
  try {
    ({ Stacks: stacks } = await new CloudFormationClient({}).send(
      new DescribeStacksCommand({ StackName: stackName }),
    ));
  } catch (error) {
    throw new CliError(
      `cannot read stack ${stackName}: ${(error as Error).message} (check AWS_REGION and your AWS credentials)`,
    );
  }
  const outputs: Record<string, string> = {};
  for (const o of stacks?.[0]?.Outputs ?? [])
    if (o.OutputKey && o.OutputValue) outputs[o.OutputKey] = o.OutputValue;
  return outputs;
};

/** `--endpoint`, else the stack's ApiUrl output (`--stack`), else AQ_ENDPOINT, else local mode's default. */
export const resolveEndpoint = async (
  options: { endpoint?: string; stack?: string },
  env: NodeJS.ProcessEnv,
  readOutputs: StackOutputReader = cloudFormationOutputs,
): Promise<URL> => {
  let raw = options.endpoint;
  if (raw === undefined && options.stack !== undefined) {
    raw = (await readOutputs(options.stack))[StackOutputs.apiUrl];
    if (!raw)
      throw new CliError(
        `stack ${options.stack} has no ${StackOutputs.apiUrl} output: is it an Attention Queue stack?`,
      );
  }
  raw ??= env['AQ_ENDPOINT'] ?? DEFAULT_ENDPOINT;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new CliError(`not a URL: ${raw} (--endpoint or AQ_ENDPOINT)`, 2);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new CliError(`not an http(s) URL: ${raw}`, 2);
  // The stage path is part of the base (https://…/prod/): keep it, with one trailing slash.
  if (!url.pathname.endsWith('/')) url.pathname = `${url.pathname}/`;
  return url;
};
