import { App, RemovalPolicy } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import { DEFAULT_STACK_NAME, stackFromContext } from '../../lib/stack-context.js';

const URL = 'https://marketplace.example.com';
const fromContext = (context: Record<string, unknown>) => stackFromContext(new App({ context }).node);

// `cdk -c key=value` passes strings; cdk.json may pass numbers and booleans.
describe('stack props from CDK context', () => {
  it('requires marketplaceBaseUrl, saying how to pass it', () => {
    expect(() => fromContext({})).toThrow(/missing context marketplaceBaseUrl: pass -c marketplaceBaseUrl=/);
  });

  it('passes marketplaceBaseUrl through', () => {
    expect(fromContext({ marketplaceBaseUrl: URL }).props.marketplaceBaseUrl).toBe(URL);
  });

  it(`names the stack ${DEFAULT_STACK_NAME} by default`, () => {
    expect(fromContext({ marketplaceBaseUrl: URL }).stackName).toBe(DEFAULT_STACK_NAME);
  });

  it('takes the stack name from context', () => {
    expect(fromContext({ marketplaceBaseUrl: URL, stackName: 'AqDev' }).stackName).toBe('AqDev');
  });

  it('parses workerPoolSize from a string', () => {
    expect(fromContext({ marketplaceBaseUrl: URL, workerPoolSize: '50' }).props.workerPoolSize).toBe(50);
  });

  it('parses workerPoolShares (high,normal,low) and workerPoolBurst', () => {
    const { props } = fromContext({
      marketplaceBaseUrl: URL,
      workerPoolShares: '60,30,10',
      workerPoolBurst: '4',
    });
    expect([props.workerPoolShares, props.workerPoolBurst]).toEqual([{ high: 60, normal: 30, low: 10 }, 4]);
  });

  it('rejects workerPoolShares that do not add up to 100, naming the context key', () => {
    expect(() => fromContext({ marketplaceBaseUrl: URL, workerPoolShares: '60,30,20' })).toThrow(
      /context workerPoolShares: the shares must add up to 100/,
    );
  });

  it('parses workerBatchSize from a string', () => {
    expect(fromContext({ marketplaceBaseUrl: URL, workerBatchSize: '4' }).props.workerBatchSize).toBe(4);
  });

  it('accepts workerPoolSize as a number', () => {
    expect(fromContext({ marketplaceBaseUrl: URL, workerPoolSize: 40 }).props.workerPoolSize).toBe(40);
  });

  it('rejects a non-numeric workerPoolSize', () => {
    expect(() => fromContext({ marketplaceBaseUrl: URL, workerPoolSize: 'many' })).toThrow(
      /context workerPoolSize must be a number/,
    );
  });

  it('leaves workerPoolSize to the default when absent', () => {
    expect(fromContext({ marketplaceBaseUrl: URL }).props.workerPoolSize).toBeUndefined();
  });

  it('maps removalPolicy=destroy', () => {
    expect(fromContext({ marketplaceBaseUrl: URL, removalPolicy: 'destroy' }).props.removalPolicy).toBe(
      RemovalPolicy.DESTROY,
    );
  });

  it('rejects an unknown removalPolicy', () => {
    expect(() => fromContext({ marketplaceBaseUrl: URL, removalPolicy: 'snapshot' })).toThrow(
      /context removalPolicy must be one of retain, destroy/,
    );
  });

  it('parses apiRateLimit', () => {
    expect(fromContext({ marketplaceBaseUrl: URL, apiRateLimit: '250' }).props.apiThrottling?.rateLimit).toBe(
      250,
    );
  });

  it('parses apiBurstLimit', () => {
    expect(
      fromContext({ marketplaceBaseUrl: URL, apiBurstLimit: '500' }).props.apiThrottling?.burstLimit,
    ).toBe(500);
  });

  it('parses tracing=false', () => {
    expect(fromContext({ marketplaceBaseUrl: URL, tracing: 'false' }).props.tracing).toBe(false);
  });

  it('leaves tracing to the stack default when unset', () => {
    expect(fromContext({ marketplaceBaseUrl: URL }).props.tracing).toBeUndefined();
  });

  it('rejects a non-boolean tracing', () => {
    expect(() => fromContext({ marketplaceBaseUrl: URL, tracing: 'yes' })).toThrow(
      /context tracing must be true or false/,
    );
  });

  it('parses apiCloudWatchRole=false', () => {
    expect(fromContext({ marketplaceBaseUrl: URL, apiCloudWatchRole: 'false' }).props.apiCloudWatchRole).toBe(
      false,
    );
  });

  it('parses accountConcurrencyLimit', () => {
    expect(
      fromContext({ marketplaceBaseUrl: URL, accountConcurrencyLimit: '400' }).props.accountConcurrencyLimit,
    ).toBe(400);
  });

  it("parses adminAccess 'account'", () => {
    expect(fromContext({ marketplaceBaseUrl: URL, adminAccess: 'account' }).props.adminAccess).toBe(
      'account',
    );
  });

  it('parses adminAccess as comma-separated principal ARNs', () => {
    expect(
      fromContext({
        marketplaceBaseUrl: URL,
        adminAccess: 'arn:aws:iam::123456789012:role/ops, arn:aws:iam::123456789012:role/ci',
      }).props.adminAccess,
    ).toEqual(['arn:aws:iam::123456789012:role/ops', 'arn:aws:iam::123456789012:role/ci']);
  });

  it('parses alarmThresholds given as JSON on the command line', () => {
    expect(
      fromContext({ marketplaceBaseUrl: URL, alarmThresholds: '{"apiLatencyP99Ms":3000}' }).props
        .alarmThresholds,
    ).toEqual({ apiLatencyP99Ms: 3000 });
  });

  it('takes alarmThresholds given as an object in cdk.json', () => {
    expect(
      fromContext({ marketplaceBaseUrl: URL, alarmThresholds: { workerErrorsPer5Minutes: 3 } }).props
        .alarmThresholds,
    ).toEqual({ workerErrorsPer5Minutes: 3 });
  });

  it('rejects alarmThresholds that are not a JSON object of numbers', () => {
    expect(() => fromContext({ marketplaceBaseUrl: URL, alarmThresholds: '{"x":"1"}' })).toThrow(
      /context alarmThresholds must be a JSON object of numbers/,
    );
  });

  it('passes queuePrefix through', () => {
    expect(fromContext({ marketplaceBaseUrl: URL, queuePrefix: 'dev' }).props.queuePrefix).toBe('dev');
  });
});
