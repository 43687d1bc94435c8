import type { z } from 'zod';
import { PatchStoreBody, PutStoreBody } from '../../lambdas/core/admin.js';
import { PutCampaignBody } from '../../lambdas/core/campaigns.js';
import type { ComponentName } from '../../lambdas/core/openapi/components.js';
import { PurgeBody } from '../../lambdas/core/operations.js';
import { BatchBodySchema, TaskSchema } from '../../lambdas/core/task-schemas.js';
import { RotateBody } from '../../lambdas/core/tenant-tokens.js';

/**
 * What each documented request body is parsed with by its handler (the batch: the array, then each task on
 * its own): the OpenAPI tests hold every example to the schema the route really validates with.
 */
export const HANDLER_BODY: Partial<Record<ComponentName, z.ZodType>> = {
  Task: TaskSchema,
  BatchRequest: BatchBodySchema,
  PutStoreRequest: PutStoreBody,
  PatchStoreRequest: PatchStoreBody,
  PurgeRequest: PurgeBody,
  RotateTokenRequest: RotateBody,
  PutCampaignRequest: PutCampaignBody,
};
