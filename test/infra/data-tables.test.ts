import { Match } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { TABLES } from '../../lambdas/config/topology.js';
import type { TableKey } from '../../lambdas/core/names.js';
import { idsMatching, logicalIdOf, resourceById, synthStack } from './synth-stack.js';

const { stack, template } = synthStack();
const TABLE_KEYS = Object.keys(TABLES) as TableKey[];
const ATTRIBUTE_TYPE = { S: 'S', N: 'N' } as const;

describe('data tables', () => {
  it(`are the ${TABLE_KEYS.length} tables of the topology`, () => {
    template.resourceCountIs('AWS::DynamoDB::Table', TABLE_KEYS.length);
  });

  it('are all named by CloudFormation', () => {
    template.allResourcesProperties('AWS::DynamoDB::Table', { TableName: Match.absent() });
  });

  describe.each(TABLE_KEYS)('%s', (key) => {
    const spec = TABLES[key];
    const id = logicalIdOf(stack.tables.all[key]);
    const tableIdsWith = (properties: Record<string, unknown>): string[] =>
      idsMatching(template, 'AWS::DynamoDB::Table', properties);

    it(`is keyed by ${spec.partitionKey.name}`, () => {
      expect(
        tableIdsWith({ KeySchema: [{ AttributeName: spec.partitionKey.name, KeyType: 'HASH' }] }),
      ).toContain(id);
    });

    it('bills per request', () => {
      expect(tableIdsWith({ BillingMode: 'PAY_PER_REQUEST' })).toContain(id);
    });

    it('has point-in-time recovery', () => {
      expect(
        tableIdsWith({ PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true } }),
      ).toContain(id);
    });

    it('is encrypted with the AWS-managed key', () => {
      expect(tableIdsWith({ SSESpecification: { SSEEnabled: true } })).toContain(id);
    });

    it('is retained when the stack is deleted', () => {
      expect(resourceById(template, id).DeletionPolicy).toBe('Retain');
    });

    it('is retained when CloudFormation replaces it', () => {
      expect(resourceById(template, id).UpdateReplacePolicy).toBe('Retain');
    });

    it(spec.ttlAttribute ? `expires items by ${spec.ttlAttribute}` : 'has no TTL', () => {
      const ttl = spec.ttlAttribute ? { AttributeName: spec.ttlAttribute, Enabled: true } : Match.absent();
      expect(tableIdsWith({ TimeToLiveSpecification: ttl })).toContain(id);
    });

    it(`has ${spec.globalIndexes.length} global secondary index(es)`, () => {
      const indexes = resourceById(template, id).Properties?.GlobalSecondaryIndexes as unknown[] | undefined;
      expect(indexes ?? []).toHaveLength(spec.globalIndexes.length);
    });

    it.each(spec.globalIndexes)('has the index $name as the topology specifies', (index) => {
      const keySchema = [
        { AttributeName: index.partitionKey.name, KeyType: 'HASH' },
        ...(index.sortKey ? [{ AttributeName: index.sortKey.name, KeyType: 'RANGE' }] : []),
      ];
      expect(
        tableIdsWith({
          GlobalSecondaryIndexes: Match.arrayWith([
            { IndexName: index.name, KeySchema: keySchema, Projection: { ProjectionType: index.projection } },
          ]),
        }),
      ).toContain(id);
    });

    it.each([
      spec.partitionKey,
      ...spec.globalIndexes.flatMap((i) => [i.partitionKey, ...(i.sortKey ? [i.sortKey] : [])]),
    ])('declares $name as type $type', (attribute) => {
      expect(
        tableIdsWith({
          AttributeDefinitions: Match.arrayWith([
            { AttributeName: attribute.name, AttributeType: ATTRIBUTE_TYPE[attribute.type] },
          ]),
        }),
      ).toContain(id);
    });
  });
});
