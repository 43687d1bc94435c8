import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';

/**
 * `cdk init` with the installed aws-cdk-lib writes its recommended feature flags into cdk.json; an older
 * cdk.json silently keeps older behaviour. The list ships with aws-cdk-lib.
 */
const require = createRequire(import.meta.url);
const recommended = JSON.parse(
  readFileSync(require.resolve('aws-cdk-lib/recommended-feature-flags.json'), 'utf8'),
) as Record<string, unknown>;
const context =
  (
    JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8')) as {
      context?: Record<string, unknown>;
    }
  ).context ?? {};

describe('cdk.json feature flags', () => {
  it('carries every flag the installed aws-cdk-lib recommends', () => {
    expect(Object.keys(recommended).filter((flag) => !(flag in context))).toEqual([]);
  });

  it('sets each to its recommended value', () => {
    expect(
      Object.entries(recommended)
        .filter(([flag, value]) => JSON.stringify(context[flag]) !== JSON.stringify(value))
        .map(([flag]) => flag),
    ).toEqual([]);
  });
});
