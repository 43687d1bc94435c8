import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { identityChanges, statefulIdentity, type StatefulIdentity } from './stateful-identity.js';
import { synthStack } from './synth-stack.js';

/**
 * Upgrade safety (issue #10): the stateful resources' identity — logical ids, table and index key
 * schemas, queue names — compared with the committed baseline. A change that would replace a table or a
 * queue (losing its data) or that CloudFormation cannot apply (a GSI's key schema) fails here unless
 * migrations.json states the migration for that resource. A new stateful resource is a change too, so the
 * baseline is updated on purpose: `AQ_UPDATE_BASELINE=1 npx vitest run --project infra test/infra/upgrade-safety.test.ts`.
 */
const BASELINE_URL = new URL('./baseline/stateful-resources.json', import.meta.url);
const MIGRATIONS_URL = new URL('./baseline/migrations.json', import.meta.url);

const MigrationsSchema = z.array(
  z.strictObject({
    /** The logical id the change is about. */
    resource: z.string().min(1),
    change: z.enum(['removed', 'added', 'changed']),
    /** How deployed data survives it (steps, or the doc that has them): never empty. */
    migration: z.string().min(20),
  }),
);

const { template } = synthStack();
const current = statefulIdentity(template);
if (process.env['AQ_UPDATE_BASELINE'] === '1')
  writeFileSync(BASELINE_URL, `${JSON.stringify(current, null, 2)}\n`);
const baseline = JSON.parse(readFileSync(BASELINE_URL, 'utf8')) as StatefulIdentity;
const migrations = MigrationsSchema.parse(JSON.parse(readFileSync(MIGRATIONS_URL, 'utf8')));

describe('upgrade safety: stateful resources against the baseline', () => {
  it('the baseline covers the tables and queues: 3 level queues, the confirm queue, the DLQ (it is not empty)', () => {
    expect(
      Object.values(baseline)
        .map((e) => e.type)
        .sort(),
    ).toEqual(
      [...Array<string>(4).fill('AWS::DynamoDB::Table'), ...Array<string>(5).fill('AWS::SQS::Queue')].sort(),
    );
  });

  it('no table or queue is replaced, removed or re-keyed without a stated migration', () => {
    const unmigrated = identityChanges(baseline, current).filter(
      (change) => !migrations.some((m) => m.resource === change.resource && m.change === change.change),
    );
    expect(unmigrated).toEqual([]);
  });

  it('detects a changed index key schema (the check can fail)', () => {
    const [id, entry] =
      Object.entries(baseline).find(
        ([, e]) => Object.keys((e.identity['globalIndexes'] as object) ?? {}).length > 0,
      ) ?? [];
    if (!id || !entry) throw new Error('no table with an index in the baseline');
    const rekeyed = structuredClone(current);
    const table = rekeyed[id];
    if (!table) throw new Error(`no ${id} in the template`);
    table.identity['globalIndexes'] = { active: { 'HASH:other': 'S' } };
    expect(identityChanges(baseline, rekeyed)).toEqual([{ resource: id, change: 'changed' }]);
  });

  it('detects a logical id change as a removal and an addition', () => {
    const [id] = Object.keys(baseline);
    if (!id) throw new Error('empty baseline');
    const { [id]: moved, ...rest } = current;
    expect(identityChanges(baseline, { ...rest, [`${id}New`]: moved as StatefulIdentity[string] })).toEqual([
      { resource: id, change: 'removed' },
      { resource: `${id}New`, change: 'added' },
    ]);
  });
});
