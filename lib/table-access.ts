import { Grant, type IGrantable } from 'aws-cdk-lib/aws-iam';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import type { FunctionName } from '../lambdas/config/runtime-config.js';
import type { TableKey } from '../lambdas/core/names.js';

/** What one function calls on one table: item actions on the table, Query on its indexes. */
export interface TableActions {
  readonly table: readonly string[];
  /** Actions on `{table}/index/*` (the table's GSIs). */
  readonly indexes?: readonly string[];
}

/**
 * The DynamoDB calls of the adapters each function composes (lambdas/app/*-app.ts), per table: no
 * grantReadWriteData, which would add Scan, DeleteItem, BatchWriteItem and ConditionCheckItem the code
 * never makes. A new call in an adapter needs its action here (the infra IAM test lists them).
 */
export const TableAccess = {
  ingest: {
    stores: { table: ['dynamodb:GetItem'] },
    // recordEnqueued and signalling are conditional updates; reads are consistent gets.
    dispatch: { table: ['dynamodb:GetItem', 'dynamodb:UpdateItem'] },
    // Task status reads the delivery record.
    deliveries: { table: ['dynamodb:GetItem'] },
  },
  admin: {
    stores: { table: ['dynamodb:GetItem', 'dynamodb:PutItem'] },
    // The backlog listing queries the active index.
    dispatch: { table: ['dynamodb:GetItem', 'dynamodb:UpdateItem'], indexes: ['dynamodb:Query'] },
    // Tokens: issue (Put), look up (Get), amend (Update), list a tenant's (Query on byTenant), and the bulk
    // usage-key backfill pages the table (Scan).
    tokens: {
      table: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:Scan'],
      indexes: ['dynamodb:Query'],
    },
  },
  authorizer: {
    tokens: { table: ['dynamodb:GetItem'] },
  },
  worker: {
    stores: { table: ['dynamodb:GetItem'] },
    dispatch: { table: ['dynamodb:GetItem', 'dynamodb:UpdateItem'] },
    // Claims and settles are conditional updates; `delivered` with its version mark is a TransactWriteItems of
    // two updates, which IAM authorizes as dynamodb:UpdateItem on each item.
    deliveries: { table: ['dynamodb:GetItem', 'dynamodb:UpdateItem'] },
  },
  reconciler: {
    // The slow sweep pages the store registry.
    stores: { table: ['dynamodb:GetItem', 'dynamodb:Scan'] },
    // Repairs are conditional updates; the sweep cursor is a put; the active listing queries the index; the
    // index backfill (issue #10's upgrade path) pages the table once.
    dispatch: {
      table: ['dynamodb:GetItem', 'dynamodb:UpdateItem', 'dynamodb:PutItem', 'dynamodb:Scan'],
      indexes: ['dynamodb:Query'],
    },
  },
} as const satisfies Record<FunctionName, Partial<Record<TableKey, TableActions>>>;

/** Grants `fn`'s actions on each table it uses (and Query on the indexes where listed). */
export const grantTables = (
  fn: FunctionName,
  grantee: IGrantable,
  tables: Readonly<Record<TableKey, ITable>>,
): void => {
  const access: Partial<Record<TableKey, TableActions>> = TableAccess[fn];
  for (const [key, actions] of Object.entries(access) as [TableKey, TableActions][]) {
    const table = tables[key];
    // Not Table.grant: it puts every action on `{arn}/index/*` as well whenever the table has an index.
    Grant.addToPrincipal({ grantee, actions: [...actions.table], resourceArns: [table.tableArn] });
    if (actions.indexes) {
      Grant.addToPrincipal({
        grantee,
        actions: [...actions.indexes],
        resourceArns: [`${table.tableArn}/index/*`],
      });
    }
  }
};
