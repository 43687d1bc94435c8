import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { cloudFormationOutputs, DEFAULT_ENDPOINT, resolveEndpoint } from '../../../bin/aq/endpoint.js';
import { StackOutputs } from '../../../lambdas/config/stack-outputs.js';

const cfn = mockClient(CloudFormationClient);
const API_URL = 'https://abc123.execute-api.eu-west-1.amazonaws.com/prod/';

beforeEach(() => {
  cfn.reset();
  cfn.on(DescribeStacksCommand, { StackName: 'AttentionQueue' }).resolves({
    Stacks: [
      {
        StackName: 'AttentionQueue',
        CreationTime: new Date(0),
        StackStatus: 'CREATE_COMPLETE',
        Outputs: [
          { OutputKey: StackOutputs.apiUrl, OutputValue: API_URL },
          { OutputKey: StackOutputs.openApiUrl, OutputValue: `${API_URL}openapi.json` },
        ],
      },
    ],
  });
});

describe('finding the endpoint', () => {
  it("reads the stack's outputs by key", async () => {
    expect(await cloudFormationOutputs('AttentionQueue')).toEqual({
      [StackOutputs.apiUrl]: API_URL,
      [StackOutputs.openApiUrl]: `${API_URL}openapi.json`,
    });
  });

  it('asks CloudFormation for the named stack', async () => {
    await cloudFormationOutputs('AttentionQueue');
    expect(cfn.commandCalls(DescribeStacksCommand)[0]?.args[0].input).toEqual({
      StackName: 'AttentionQueue',
    });
  });

  it('uses the ApiUrl output with --stack', async () => {
    expect(String(await resolveEndpoint({ stack: 'AttentionQueue' }, {}))).toBe(API_URL);
  });

  it('explains a stack it cannot read', async () => {
    cfn.on(DescribeStacksCommand).rejects(new Error('Stack with id Nope does not exist'));
    await expect(resolveEndpoint({ stack: 'Nope' }, {})).rejects.toThrow(
      /cannot read stack Nope: .*does not exist/,
    );
  });

  it('explains a stack without the output', async () => {
    await expect(resolveEndpoint({ stack: 'Other' }, {}, async () => ({}))).rejects.toThrow(
      /has no ApiUrl output/,
    );
  });

  it('defaults to local mode', async () => {
    expect(String(await resolveEndpoint({}, {}))).toBe(`${DEFAULT_ENDPOINT}/`);
  });

  it('refuses a non-http URL', async () => {
    await expect(resolveEndpoint({ endpoint: 'ftp://x' }, {})).rejects.toThrow(/not an http\(s\) URL/);
  });
});
