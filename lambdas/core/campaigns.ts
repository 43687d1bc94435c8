import { z } from 'zod';
import { OverridesSchema, PLAN_NAMES, resolvePolicy, type PlanName, type Policy } from './plans.js';
import type { StoreRecord } from './store-model.js';

/**
 * Campaign windows (contract, "Scheduling policy"): between `from` (inclusive) and `until` (exclusive) a store
 * runs with the campaign's plan and overrides, then with its own again. Boundaries are instants, so nothing
 * happens at them: every reader resolves the policy for the time it acts at with `effectivePolicy`.
 */

/** Campaigns one store or one tenant may hold (their list is one DynamoDB item: 20 × ~1 KiB at most). */
export const MAX_CAMPAIGNS = 20;
/** The longest window a campaign may span (contract: 400 beyond). */
export const MAX_CAMPAIGN_DAYS = 90;
export const MAX_CAMPAIGN_MS = MAX_CAMPAIGN_DAYS * 24 * 3600 * 1000;
/** How long a worker or the reconciler keeps a campaign list: a PUT or DELETE takes effect within this. */
export const CAMPAIGN_CACHE_MS = 30_000;
/** Ended campaigns older than this are dropped from their list at its next write (they no longer count). */
export const ENDED_CAMPAIGN_KEEP_MS = 30 * 24 * 3600 * 1000;

export const CAMPAIGN_SCOPES = ['store', 'tenant'] as const;
export type CampaignScope = (typeof CAMPAIGN_SCOPES)[number];

export const CampaignIdSchema = z
  .string()
  .regex(/^[A-Za-z0-9._-]{1,64}$/, 'must be 1–64 characters of [A-Za-z0-9._-]');

const Instant = z.iso.datetime({ offset: true });

export const PutCampaignBody = z
  .strictObject({
    from: Instant.meta({ description: 'start (inclusive), ISO-8601' }),
    until: Instant.meta({
      description: `end (exclusive), ISO-8601; at most ${MAX_CAMPAIGN_DAYS} days after from`,
    }),
    plan: z
      .enum(PLAN_NAMES)
      .optional()
      .meta({ description: "the plan during the window (default: the store's)" }),
    overrides: OverridesSchema.optional(),
    note: z.string().max(500).optional(),
  })
  .superRefine((body, ctx) => {
    const span = Date.parse(body.until) - Date.parse(body.from);
    if (span <= 0) ctx.addIssue({ code: 'custom', path: ['until'], message: 'must be after from' });
    else if (span > MAX_CAMPAIGN_MS)
      ctx.addIssue({
        code: 'custom',
        path: ['until'],
        message: `must be at most ${MAX_CAMPAIGN_DAYS} days after from`,
      });
  });
export type PutCampaign = z.infer<typeof PutCampaignBody>;

/** A campaign as kept (instants normalised to UTC) and answered. */
export const CampaignSchema = z.object({
  campaignId: z.string(),
  from: z.iso.datetime(),
  until: z.iso.datetime(),
  plan: z.enum(PLAN_NAMES).optional(),
  overrides: OverridesSchema.optional(),
  note: z.string().optional(),
  createdAt: z.iso.datetime(),
  updatedAt: z.iso.datetime(),
});
export type Campaign = z.infer<typeof CampaignSchema>;

/** One owner's campaigns and the revision they were read at (0: none ever written). */
export interface CampaignList {
  rev: number;
  campaigns: Campaign[];
}

export interface CampaignOwner {
  scope: CampaignScope;
  id: string;
}

/** Where campaigns are kept: one list per store and per tenant, replaced whole under a revision check. */
export interface CampaignBook {
  read(owner: CampaignOwner): Promise<CampaignList>;
  /** Replaces the list if it is still at `seenRev`; false when another write came first. */
  write(owner: CampaignOwner, campaigns: Campaign[], seenRev: number): Promise<boolean>;
}

/** The campaigns that can apply to one store: its own and its tenant's. */
export interface StoreCampaigns {
  store: readonly Campaign[];
  tenant: readonly Campaign[];
}
export const NO_CAMPAIGNS: StoreCampaigns = { store: [], tenant: [] };

export const readStoreCampaigns = async (
  book: CampaignBook | undefined,
  store: Pick<StoreRecord, 'storeId' | 'tenantId'>,
): Promise<StoreCampaigns> => {
  if (!book) return NO_CAMPAIGNS;
  const [own, tenant] = await Promise.all([
    book.read({ scope: 'store', id: store.storeId }),
    book.read({ scope: 'tenant', id: store.tenantId }),
  ]);
  return { store: own.campaigns, tenant: tenant.campaigns };
};

export type CampaignState = 'scheduled' | 'active' | 'ended';

/** `from` inclusive, `until` exclusive: at `until` the store is back on its own policy. */
export const campaignState = (campaign: Pick<Campaign, 'from' | 'until'>, now: number): CampaignState => {
  if (now < Date.parse(campaign.from)) return 'scheduled';
  return now < Date.parse(campaign.until) ? 'active' : 'ended';
};

/** Among the active campaigns of one kind, the latest `from` wins; on a tie, the greatest campaignId. */
export const winningCampaign = (campaigns: readonly Campaign[], now: number): Campaign | undefined => {
  let best: Campaign | undefined;
  for (const campaign of campaigns) {
    if (campaignState(campaign, now) !== 'active') continue;
    if (best === undefined) {
      best = campaign;
      continue;
    }
    const byFrom = Date.parse(campaign.from) - Date.parse(best.from);
    if (byFrom > 0 || (byFrom === 0 && campaign.campaignId > best.campaignId)) best = campaign;
  }
  return best;
};

export interface EffectivePolicy {
  plan: PlanName;
  policy: Policy;
  source: 'store' | 'campaign';
  campaignId?: string;
  /** Whose campaign applies (with `campaignId`). */
  scope?: CampaignScope;
}

/**
 * The policy a store runs with at `now`. A store campaign wins over a tenant campaign. A campaign that names
 * a plan replaces the store's plan and its per-store overrides (it says what the store runs with); one without
 * a plan layers its overrides on the store's own policy. Its overrides always apply last.
 */
export const effectivePolicy = (
  store: Pick<StoreRecord, 'plan' | 'overrides'>,
  campaigns: StoreCampaigns,
  now: number,
): EffectivePolicy => {
  const own = winningCampaign(campaigns.store, now);
  const tenant = own ? undefined : winningCampaign(campaigns.tenant, now);
  const campaign = own ?? tenant;
  if (!campaign) {
    return { plan: store.plan, policy: resolvePolicy(store.plan, store.overrides), source: 'store' };
  }
  const plan = campaign.plan ?? store.plan;
  const base = resolvePolicy(plan, campaign.plan === undefined ? store.overrides : undefined);
  return {
    plan,
    policy: { ...base, ...(campaign.overrides ?? {}) },
    source: 'campaign',
    campaignId: campaign.campaignId,
    scope: own ? 'store' : 'tenant',
  };
};

/**
 * The list after putting `next` (replacing the campaign of the same id): ended campaigns older than
 * ENDED_CAMPAIGN_KEEP_MS are dropped; more than MAX_CAMPAIGNS is refused by the caller.
 */
export const withCampaign = (list: readonly Campaign[], next: Campaign, now: number): Campaign[] => [
  ...list.filter(
    (c) => c.campaignId !== next.campaignId && Date.parse(c.until) + ENDED_CAMPAIGN_KEEP_MS > now,
  ),
  next,
];

export interface CampaignTransition {
  event: 'campaign applied' | 'campaign reverted';
  campaignId: string;
}

/**
 * What one worker container saw last of each store's campaign, so that its logs say when a store's slices
 * start running under a campaign ("campaign applied") and when they stop ("campaign reverted"). Per
 * container: each container that runs the store says it once; a log query takes the first.
 */
export class CampaignTransitions {
  private readonly last = new Map<string, string>();

  note(storeId: string, effective: Pick<EffectivePolicy, 'campaignId'>): CampaignTransition[] {
    const before = this.last.get(storeId);
    const now = effective.campaignId;
    if (before === now) return [];
    if (this.last.size > 10_000) this.last.clear();
    if (now === undefined) this.last.delete(storeId);
    else this.last.set(storeId, now);
    return [
      ...(before === undefined ? [] : [{ event: 'campaign reverted' as const, campaignId: before }]),
      ...(now === undefined ? [] : [{ event: 'campaign applied' as const, campaignId: now }]),
    ];
  }
}
