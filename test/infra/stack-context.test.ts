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

  it('parses apiTracing', () => {
    expect(fromContext({ marketplaceBaseUrl: URL, apiTracing: 'true' }).props.apiTracingEnabled).toBe(true);
  });

  it('rejects a non-boolean apiTracing', () => {
    expect(() => fromContext({ marketplaceBaseUrl: URL, apiTracing: 'yes' })).toThrow(
      /context apiTracing must be true or false/,
    );
  });

  it('passes queuePrefix through', () => {
    expect(fromContext({ marketplaceBaseUrl: URL, queuePrefix: 'dev' }).props.queuePrefix).toBe('dev');
  });
});
