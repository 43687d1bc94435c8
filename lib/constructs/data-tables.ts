import { RemovalPolicy } from 'aws-cdk-lib';
import {
  AttributeType,
  BillingMode,
  ProjectionType,
  Table,
  TableEncryption,
  type Attribute,
  type ITable,
} from 'aws-cdk-lib/aws-dynamodb';
import { Construct } from 'constructs';
import { TABLES, type KeyType } from '../../lambdas/config/topology.js';
import { Tables, type TableKey } from '../../lambdas/core/names.js';

/** The four tables, by the key the runtime and topology use for them. */
export type TableSet = Readonly<Record<TableKey, ITable>>;

export interface DataTablesProps {
  /**
   * What happens to the tables when the stack is deleted or a table is replaced. They hold stores,
   * tenant tokens, dispatch state and delivery records, so production keeps them; dev stacks may
   * pass DESTROY.
   * @default RemovalPolicy.RETAIN
   */
  readonly removalPolicy?: RemovalPolicy;
}

const attribute = (key: { name: string; type: KeyType }): Attribute => ({
  name: key.name,
  type: key.type === 'S' ? AttributeType.STRING : AttributeType.NUMBER,
});

/**
 * The DynamoDB tables, built from TABLES: on-demand, point-in-time recovery on, encrypted with the
 * AWS-managed key (stated explicitly, not left to the service default), and named by CloudFormation.
 */
export class DataTables extends Construct {
  public readonly stores: Table;
  public readonly dispatch: Table;
  public readonly tokens: Table;
  public readonly deliveries: Table;
  /** The same tables, by key, for wiring loops. */
  public readonly all: Readonly<Record<TableKey, Table>>;

  constructor(scope: Construct, id: string, props: DataTablesProps = {}) {
    super(scope, id);
    const removalPolicy = props.removalPolicy ?? RemovalPolicy.RETAIN;

    const build = (key: TableKey): Table => {
      const spec = TABLES[key];
      const table = new Table(this, Tables[key].id, {
        partitionKey: attribute(spec.partitionKey),
        billingMode: BillingMode.PAY_PER_REQUEST,
        pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
        encryption: TableEncryption.AWS_MANAGED,
        timeToLiveAttribute: spec.ttlAttribute,
        removalPolicy,
      });
      for (const index of spec.globalIndexes) {
        table.addGlobalSecondaryIndex({
          indexName: index.name,
          partitionKey: attribute(index.partitionKey),
          sortKey: index.sortKey ? attribute(index.sortKey) : undefined,
          projectionType: index.projection === 'ALL' ? ProjectionType.ALL : ProjectionType.KEYS_ONLY,
        });
      }
      return table;
    };

    this.stores = build('stores');
    this.dispatch = build('dispatch');
    this.tokens = build('tokens');
    this.deliveries = build('deliveries');
    this.all = {
      stores: this.stores,
      dispatch: this.dispatch,
      tokens: this.tokens,
      deliveries: this.deliveries,
    };
  }
}
