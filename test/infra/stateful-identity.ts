import type { Template } from 'aws-cdk-lib/assertions';
import { resourcesOfType } from './synth-stack.js';

/**
 * The properties of the stack's stateful resources whose change CloudFormation cannot make in place: it
 * replaces the resource (a new, empty table or queue), or fails the update (a GSI's key schema). A
 * logical id that changes replaces the resource too. Everything else (billing, TTL, retention…) is left
 * out on purpose: those update in place.
 */
export const STATEFUL_TYPES = ['AWS::DynamoDB::Table', 'AWS::SQS::Queue'] as const;

type Key = { AttributeName: string; KeyType: string }[];
interface TableProps {
  TableName?: unknown;
  KeySchema: Key;
  AttributeDefinitions: { AttributeName: string; AttributeType: string }[];
  GlobalSecondaryIndexes?: { IndexName: string; KeySchema: Key }[];
  LocalSecondaryIndexes?: { IndexName: string; KeySchema: Key }[];
}
interface QueueProps {
  QueueName?: unknown;
  FifoQueue?: boolean;
}

export type StatefulIdentity = Record<string, { type: string; identity: Record<string, unknown> }>;

const keyTypes = (table: TableProps, key: Key): Record<string, string> =>
  Object.fromEntries(
    key.map((k) => [
      `${k.KeyType}:${k.AttributeName}`,
      table.AttributeDefinitions.find((a) => a.AttributeName === k.AttributeName)?.AttributeType ?? '?',
    ]),
  );

const indexes = (table: TableProps, list: { IndexName: string; KeySchema: Key }[] | undefined) =>
  Object.fromEntries((list ?? []).map((index) => [index.IndexName, keyTypes(table, index.KeySchema)]));

export const statefulIdentity = (template: Template): StatefulIdentity => {
  const out: StatefulIdentity = {};
  for (const type of STATEFUL_TYPES) {
    for (const [id, resource] of resourcesOfType(template, type)) {
      if (type === 'AWS::DynamoDB::Table') {
        const table = resource.Properties as unknown as TableProps;
        out[id] = {
          type,
          identity: {
            tableName: table.TableName ?? null,
            key: keyTypes(table, table.KeySchema),
            globalIndexes: indexes(table, table.GlobalSecondaryIndexes),
            localIndexes: indexes(table, table.LocalSecondaryIndexes),
          },
        };
      } else {
        const queue = (resource.Properties ?? {}) as QueueProps;
        out[id] = { type, identity: { queueName: queue.QueueName ?? null, fifo: queue.FifoQueue ?? false } };
      }
    }
  }
  return out;
};

/** One difference between the baseline and the template, named for the migrations list. */
export interface IdentityChange {
  readonly resource: string;
  readonly change: 'removed' | 'added' | 'changed';
}

export const identityChanges = (baseline: StatefulIdentity, current: StatefulIdentity): IdentityChange[] => {
  const changes: IdentityChange[] = [];
  for (const [id, entry] of Object.entries(baseline)) {
    const now = current[id];
    if (!now) changes.push({ resource: id, change: 'removed' });
    else if (JSON.stringify(now) !== JSON.stringify(entry)) changes.push({ resource: id, change: 'changed' });
  }
  for (const id of Object.keys(current)) if (!baseline[id]) changes.push({ resource: id, change: 'added' });
  return changes;
};
