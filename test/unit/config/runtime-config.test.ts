import { describe, expect, it } from 'vitest';
import { EnvNames } from '../../../lambdas/config/env-names.js';
import {
  ConfigError,
  FunctionEnv,
  loadConfig,
  type FunctionName,
} from '../../../lambdas/config/runtime-config.js';
import { FULL_ENV } from '../support/fixtures.js';

const FUNCTIONS = Object.keys(FunctionEnv) as FunctionName[];
const without = (name: string): Record<string, string> =>
  Object.fromEntries(Object.entries(FULL_ENV).filter(([key]) => key !== name));

describe('loadConfig', () => {
  it.each(FUNCTIONS)('parses a valid environment for the %s function', (fn) => {
    expect(() => loadConfig(fn, FULL_ENV)).not.toThrow();
  });

  it.each(FUNCTIONS)('keeps only the variables the %s function reads', (fn) => {
    const config = loadConfig(fn, { ...FULL_ENV, UNRELATED: 'x' });
    expect(Object.keys(config).every((key) => (FunctionEnv[fn] as readonly string[]).includes(key))).toBe(
      true,
    );
  });

  it('applies the defaults', () => {
    expect(loadConfig('worker', without(EnvNames.region))).toMatchObject({
      [EnvNames.region]: 'us-east-1',
      [EnvNames.marketplaceTimeoutMs]: 5_000,
      [EnvNames.emptyPollSeconds]: 1,
    });
  });

  it('reads numbers from strings', () => {
    expect(loadConfig('reconciler', { ...FULL_ENV, [EnvNames.sweepStoresPerRun]: '120' })).toMatchObject({
      [EnvNames.sweepStoresPerRun]: 120,
      [EnvNames.attentionGraceSeconds]: 20,
    });
  });

  it('does not require what a function does not read', () => {
    expect(() => loadConfig('authorizer', { [EnvNames.tokensTable]: 'tokens' })).not.toThrow();
  });

  it.each<[FunctionName, string]>([
    ['ingest', EnvNames.storesTable],
    ['ingest', EnvNames.deliveriesTable],
    ['admin', EnvNames.queuePrefix],
    ['admin', EnvNames.tokensTable],
    ['authorizer', EnvNames.tokensTable],
    ['worker', EnvNames.marketplaceBaseUrl],
    ['worker', EnvNames.attentionQueueUrl],
    ['reconciler', EnvNames.dispatchTable],
  ])('fails for %s naming the missing %s', (fn, name) => {
    expect(() => loadConfig(fn, without(name))).toThrow(new RegExp(`the ${fn} function: .*${name}: `));
  });

  it.each<[FunctionName, string, string]>([
    ['admin', EnvNames.queuePrefix, 'Bad_Prefix'],
    ['admin', EnvNames.queuePrefix, 'a-prefix-longer-than-16'],
    ['worker', EnvNames.attentionQueueUrl, 'not a url'],
    ['worker', EnvNames.marketplaceTimeoutMs, '20000'],
    ['worker', EnvNames.marketplaceTimeoutMs, 'fast'],
    ['worker', EnvNames.emptyPollSeconds, '21'],
    ['worker', EnvNames.emptyPollSeconds, '0.5'],
    ['ingest', EnvNames.storeCacheSeconds, '-1'],
    ['reconciler', EnvNames.sweepStoresPerRun, '10001'],
    ['reconciler', EnvNames.attentionGraceSeconds, '0'],
    ['worker', EnvNames.sqsEndpoint, 'not a url'],
  ])('fails for %s naming %s=%j', (fn, name, value) => {
    expect(() => loadConfig(fn, { ...FULL_ENV, [name]: value })).toThrow(new RegExp(`${name}: `));
  });

  it("reads the usage plan's API stage for the admin function, and leaves it unset when absent (local mode)", () => {
    expect(loadConfig('admin', { ...FULL_ENV, AQ_USAGE_PLAN_STAGE: 'abc123defg:prod' })).toMatchObject({
      [EnvNames.usagePlanStage]: 'abc123defg:prod',
    });
    expect(loadConfig('admin', FULL_ENV)[EnvNames.usagePlanStage]).toBeUndefined();
  });

  it.each(['abc123', 'abc123:', ':prod', 'ABC:prod', 'abc:prod/x'])(
    'refuses AQ_USAGE_PLAN_STAGE %s, naming it',
    (value) => {
      expect(() => loadConfig('admin', { ...FULL_ENV, AQ_USAGE_PLAN_STAGE: value })).toThrow(
        /AQ_USAGE_PLAN_STAGE: \{restApiId\}:\{stageName\}/,
      );
    },
  );

  it('throws a ConfigError', () => {
    expect(() => loadConfig('ingest', {})).toThrow(ConfigError);
  });

  it('names every bad variable at once', () => {
    expect(() =>
      loadConfig('ingest', { [EnvNames.attentionQueueUrl]: FULL_ENV[EnvNames.attentionQueueUrl] }),
    ).toThrow(
      new RegExp(`${EnvNames.storesTable}: .*${EnvNames.dispatchTable}: .*${EnvNames.deliveriesTable}: `),
    );
  });
});

describe('FunctionEnv', () => {
  it.each(FUNCTIONS)('gives the %s function the region and the emulator endpoints', (fn) => {
    expect(FunctionEnv[fn]).toEqual(
      expect.arrayContaining([EnvNames.region, EnvNames.sqsEndpoint, EnvNames.dynamoEndpoint]),
    );
  });

  it.each(FUNCTIONS)('lists only known variables for the %s function', (fn) => {
    const known = new Set<string>(Object.values(EnvNames));
    expect(FunctionEnv[fn].filter((name) => !known.has(name))).toEqual([]);
  });
});
