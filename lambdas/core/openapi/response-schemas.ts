import { RATE_REASONS } from '../adaptive-rate.js';
import { z } from 'zod';
import { CAMPAIGN_SCOPES, CampaignSchema } from '../campaigns.js';
import { PLAN_NAMES, PolicySchema } from '../plans.js';
import { DELIVERY_STATUSES } from '../ports.js';
import { STORE_STATUSES } from '../store-model.js';

/**
 * The bodies the handlers answer with, as zod schemas. The handlers build these objects directly (they
 * validate what comes in, not what goes out); the documentation test sends every example to local mode
 * and parses each answer with these, so a handler that drifts from its documented shape fails a test.
 */
export const ErrorBodySchema = z.object({
  error: z.object({
    code: z.string().meta({ description: 'machine-readable, e.g. invalid_request, store_not_found' }),
    message: z.string().meta({ description: 'human text; for a 400 it names the field' }),
    details: z.unknown().optional(),
  }),
});

const count = z.number().int().min(0);

export const StoreViewSchema = z.object({
  storeId: z.string(),
  tenantId: z.string(),
  marketplace: z.string(),
  plan: z.enum(PLAN_NAMES),
  status: z.enum(STORE_STATUSES),
  policy: PolicySchema.meta({ description: "the store's own policy: its plan with its overrides" }),
  effective: z
    .object({
      plan: z.enum(PLAN_NAMES),
      policy: PolicySchema,
      source: z.enum(['store', 'campaign']),
      campaignId: z.string().optional(),
      scope: z
        .enum(CAMPAIGN_SCOPES)
        .optional()
        .meta({ description: "whose campaign: the store's or its tenant's" }),
    })
    .meta({ description: 'the policy in force now: the store’s own, or a campaign window’s' }),
  queue: z.object({
    backlog: count,
    inFlight: count,
    delayed: count,
    deadLetters: count,
    oldestAgeSeconds: count,
  }),
  activeConsumers: count,
  rate: z
    .object({
      configured: z.number().positive().meta({ description: 'the policy ratePerSecond' }),
      effective: z.number().positive().meta({
        description: 'calls per second the store runs at now: min(configured, what the marketplace says)',
      }),
      reason: z.enum(RATE_REASONS).meta({
        description:
          'policy: the configured rate holds; header: the marketplace rate-limit headers; backoff: bare 429s (AIMD)',
      }),
    })
    .meta({ description: 'the adaptive rate (the marketplace own limits)' }),
});

export const TaskAcceptedSchema = z.object({
  storeId: z.string(),
  eventId: z.string(),
  status: z.literal('accepted'),
});

export const BatchResultSchema = z.object({
  accepted: z.array(z.string()),
  rejected: z.array(
    z.object({ eventId: z.string(), error: z.object({ code: z.string(), message: z.string() }) }),
  ),
});

export const TaskStatusSchema = z.object({
  storeId: z.string(),
  eventId: z.string(),
  status: z.enum(DELIVERY_STATUSES),
  attempts: count.optional(),
  lastError: z
    .string()
    .meta({ description: 'the last failed attempt’s error, or why the task is stale; absent once delivered' })
    .optional(),
});

export const RedriveResultSchema = z.object({ storeId: z.string(), moving: count });

export const TokenViewSchema = z.object({
  tokenId: z.string(),
  status: z.enum(['active', 'expiring', 'expired', 'revoked']),
  createdAt: z.iso.datetime(),
  expiresAt: z.iso.datetime().optional(),
  revokedAt: z.iso.datetime().optional(),
});

export const TokenCreatedSchema = z.object({
  token: z.string().meta({ description: 'the credential, shown once; only its hash is stored' }),
  tokenId: z.string(),
  tenantId: z.string(),
});

export const TokenListSchema = z.object({ tenantId: z.string(), tokens: z.array(TokenViewSchema) });

export const TokenRotatedSchema = TokenCreatedSchema.extend({ replaced: TokenViewSchema });

export const UsageKeyBackfillSchema = z.object({ tenantId: z.string(), tokensUpdated: count });

export const UsageKeysBackfillSchema = z.object({
  tenants: z.array(UsageKeyBackfillSchema),
  cursor: z.string().optional(),
});

export const BacklogPageSchema = z.object({
  stores: z.array(StoreViewSchema.extend({ activeSince: z.iso.datetime(), busySeconds: count })),
  cursor: z.string().optional().meta({ description: 'pass as ?cursor= for the next page' }),
});

export const PurgeResultSchema = z.object({
  storeId: z.string(),
  discarded: count,
  status: z.literal('purged'),
});

const isoOrNull = z.iso.datetime().nullable();

export const StoreMeasuresSchema = StoreViewSchema.extend({
  measures: z.object({
    backlog: count,
    oldestAgeSeconds: count,
    deadLetters: count,
    activeSince: isoOrNull,
    drainingSeconds: count,
    lastDrainSeconds: count.nullable(),
    lastIdleAt: isoOrNull,
    attentions: z.object({ republished: count, resent: count, discarded: count }),
    blocks: z.object({ lease: count, rateLimit: count }),
  }),
});

export const CampaignViewSchema = CampaignSchema.extend({
  storeId: z.string().optional(),
  tenantId: z.string().optional(),
  state: z.enum(['scheduled', 'active', 'ended']).meta({ description: 'at the time of the answer' }),
});

export const CampaignListSchema = z.object({ campaigns: z.array(CampaignViewSchema) });
