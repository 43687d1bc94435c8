import { GetCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { z } from 'zod';
import {
  CampaignSchema,
  type Campaign,
  type CampaignBook,
  type CampaignList,
  type CampaignOwner,
} from '../core/campaigns.js';
import { campaignListId, Tables } from '../core/names.js';
import { conditional, sameAsWritten } from './dynamo-conditional.js';

const KEY = Tables.dispatch.partitionKey;
const ListItemSchema = z.object({ rev: z.number().int().min(1), campaigns: z.array(CampaignSchema) });

/**
 * Campaign lists in the dispatch table, one item per store or tenant under a reserved id (no new table, no
 * new index: the worker and the reconciler already read that table). Each write replaces the list under a
 * revision check, so two operators' writes never lose one another.
 */
export class DynamoCampaignBook implements CampaignBook {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async read(owner: CampaignOwner): Promise<CampaignList> {
    const out = await this.doc.send(
      new GetCommand({
        TableName: this.tableName,
        Key: { [KEY]: campaignListId(owner.scope, owner.id) },
        ConsistentRead: true,
      }),
    );
    // Only a campaign write creates the item, always with its revision: without one, nothing was written.
    return out.Item?.['rev'] === undefined ? { rev: 0, campaigns: [] } : ListItemSchema.parse(out.Item);
  }

  async write(owner: CampaignOwner, campaigns: Campaign[], seenRev: number): Promise<boolean> {
    const result = await conditional(() =>
      this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { [KEY]: campaignListId(owner.scope, owner.id) },
          UpdateExpression: 'SET campaigns = :campaigns, rev = :next',
          ConditionExpression: seenRev === 0 ? 'attribute_not_exists(rev)' : 'rev = :seen',
          ExpressionAttributeValues: {
            ':campaigns': campaigns,
            ':next': seenRev + 1,
            ...(seenRev === 0 ? {} : { ':seen': seenRev }),
          },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      ),
    );
    // Refused on its own result (an SDK retry after a lost answer): written.
    if (result.ok) return true;
    const found = result.current;
    return found?.['rev'] === seenRev + 1 && sameAsWritten(found['campaigns'], campaigns);
  }
}

/**
 * The worker's and the reconciler's view: each list kept for `ttlMs` per container (lists that are empty
 * too: most stores and tenants have none). A PUT or DELETE takes effect within `ttlMs`; the boundaries of a
 * campaign already known need no refresh, since they are instants.
 */
export class CachedCampaignBook implements CampaignBook {
  private readonly cache = new Map<string, { at: number; value: CampaignList }>();
  constructor(
    private readonly inner: CampaignBook,
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  async read(owner: CampaignOwner): Promise<CampaignList> {
    const key = campaignListId(owner.scope, owner.id);
    const hit = this.cache.get(key);
    if (hit && this.now() - hit.at < this.ttlMs) return hit.value;
    const value = await this.inner.read(owner);
    if (this.cache.size > 10_000) this.cache.clear();
    this.cache.set(key, { at: this.now(), value });
    return value;
  }

  write(owner: CampaignOwner, campaigns: Campaign[], seenRev: number): Promise<boolean> {
    this.cache.delete(campaignListId(owner.scope, owner.id));
    return this.inner.write(owner, campaigns, seenRev);
  }
}
