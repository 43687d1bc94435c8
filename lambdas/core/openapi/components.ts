import { z } from 'zod';
import { PatchStoreBody, PutStoreBody } from '../admin.js';
import { PutCampaignBody } from '../campaigns.js';
import { PurgeBody } from '../operations.js';
import { BatchBodySchema, MAX_BATCH_TASKS } from '../task-schemas.js';
import { RotateBody } from '../tenant-tokens.js';
import {
  BacklogPageSchema,
  BatchResultSchema,
  CampaignListSchema,
  CampaignViewSchema,
  ErrorBodySchema,
  PurgeResultSchema,
  RedriveResultSchema,
  StoreMeasuresSchema,
  StoreViewSchema,
  TaskAcceptedSchema,
  TaskStatusSchema,
  TokenCreatedSchema,
  TokenListSchema,
  TokenRotatedSchema,
  TokenViewSchema,
  UsageKeyBackfillSchema,
  UsageKeysBackfillSchema,
} from './response-schemas.js';
import { TASK_VARIANTS } from './task-variants.js';

const variants = TASK_VARIANTS.map((v) => v.schema);
/** A task: one variant per type (the handler's envelope with the type's payload). */
export const TaskDocSchema = z.discriminatedUnion(
  'type',
  variants as unknown as [(typeof variants)[number], ...(typeof variants)[number][]],
);

/**
 * The batch body as documented: the handler's BatchBodySchema with its items described as tasks. The
 * handler (and the gateway model) check only the array, then each task on its own, so one bad task is
 * rejected in the answer rather than refusing the batch.
 */
export const BatchDocSchema = BatchBodySchema.extend({
  tasks: z.array(TaskDocSchema).min(1).max(MAX_BATCH_TASKS),
});

/** Every named schema of the document (components/schemas), request bodies first. */
export const COMPONENTS = {
  Task: TaskDocSchema,
  BatchRequest: BatchDocSchema,
  PutStoreRequest: PutStoreBody,
  PatchStoreRequest: PatchStoreBody,
  PurgeRequest: PurgeBody,
  RotateTokenRequest: RotateBody,
  PutCampaignRequest: PutCampaignBody,
  Error: ErrorBodySchema,
  Store: StoreViewSchema,
  TaskAccepted: TaskAcceptedSchema,
  BatchResult: BatchResultSchema,
  TaskStatus: TaskStatusSchema,
  RedriveResult: RedriveResultSchema,
  TokenView: TokenViewSchema,
  TokenCreated: TokenCreatedSchema,
  TokenList: TokenListSchema,
  TokenRotated: TokenRotatedSchema,
  UsageKeyBackfill: UsageKeyBackfillSchema,
  UsageKeysBackfill: UsageKeysBackfillSchema,
  BacklogPage: BacklogPageSchema,
  PurgeResult: PurgeResultSchema,
  StoreMeasures: StoreMeasuresSchema,
  Campaign: CampaignViewSchema,
  CampaignList: CampaignListSchema,
} as const satisfies Record<string, z.ZodType>;

export type ComponentName = keyof typeof COMPONENTS;

/** Every schema that gets a name in the document: the components and each task type's variant. */
export const namedSchemas = (): Record<string, z.ZodType> => ({
  ...COMPONENTS,
  ...Object.fromEntries(TASK_VARIANTS.map((v) => [v.name, v.schema])),
});

export const componentRef = (name: string): string => `#/components/schemas/${name}`;
