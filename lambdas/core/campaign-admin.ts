import { existingStore, type AdminDeps } from './admin.js';
import {
  campaignState,
  CampaignIdSchema,
  MAX_CAMPAIGNS,
  PutCampaignBody,
  withCampaign,
  type Campaign,
  type CampaignBook,
  type CampaignOwner,
} from './campaigns.js';
import { ConflictError, NotFoundError, ValidationError } from './errors.js';
import {
  json,
  parseJsonBody,
  storeIdOf,
  tenantIdOf,
  validate,
  type HttpRequest,
  type HttpResponse,
} from './http.js';

/** The campaign routes (contract, "Campaign windows"): one list per store and per tenant. */
export interface CampaignAdminDeps extends AdminDeps {
  campaigns: CampaignBook;
}

/** A list write retried this often when another write came first (concurrent operators). */
const WRITE_ATTEMPTS = 3;

const iso = (ms: number): string => new Date(ms).toISOString();

/** A campaign as answered: as kept, with its state at the time of the answer. */
const view = (owner: CampaignOwner, campaign: Campaign, now: number) => ({
  ...campaign,
  ...(owner.scope === 'store' ? { storeId: owner.id } : { tenantId: owner.id }),
  state: campaignState(campaign, now),
});

/** The owner named by the path; a store campaign needs the store to exist (404), a tenant's does not. */
const ownerOf = async (deps: CampaignAdminDeps, request: HttpRequest): Promise<CampaignOwner> => {
  if (request.pathParameters['storeId'] !== undefined) {
    const store = await existingStore(deps, storeIdOf(request));
    return { scope: 'store', id: store.storeId };
  }
  return { scope: 'tenant', id: tenantIdOf(request) };
};

const campaignIdOf = (request: HttpRequest): string =>
  validate(CampaignIdSchema, request.pathParameters['campaignId'], ['campaignId']);

/** Read, change, write under the list's revision; retried when another write came first. */
const changeList = async (
  deps: CampaignAdminDeps,
  owner: CampaignOwner,
  change: (list: Campaign[]) => Campaign[],
): Promise<void> => {
  for (let attempt = 0; attempt < WRITE_ATTEMPTS; attempt++) {
    const { rev, campaigns } = await deps.campaigns.read(owner);
    if (await deps.campaigns.write(owner, change(campaigns), rev)) return;
  }
  throw new ConflictError(
    'concurrent_update',
    `the campaigns of ${owner.scope} ${owner.id} changed meanwhile: retry`,
  );
};

export const putCampaign = async (deps: CampaignAdminDeps, request: HttpRequest): Promise<HttpResponse> => {
  const owner = await ownerOf(deps, request);
  const campaignId = campaignIdOf(request);
  const body = validate(PutCampaignBody, parseJsonBody(request, 16 * 1024));
  const now = deps.clock.now();
  let saved: Campaign | undefined;
  let created = false;
  await changeList(deps, owner, (list) => {
    const before = list.find((c) => c.campaignId === campaignId);
    created = before === undefined;
    saved = {
      campaignId,
      from: iso(Date.parse(body.from)),
      until: iso(Date.parse(body.until)),
      ...(body.plan ? { plan: body.plan } : {}),
      ...(body.overrides ? { overrides: body.overrides } : {}),
      ...(body.note === undefined ? {} : { note: body.note }),
      createdAt: before?.createdAt ?? iso(now),
      updatedAt: iso(now),
    };
    const next = withCampaign(list, saved, now);
    if (next.length > MAX_CAMPAIGNS) {
      throw new ValidationError(
        `campaignId: ${owner.scope} ${owner.id} already has ${MAX_CAMPAIGNS} campaigns (the most it may hold): delete one first`,
      );
    }
    return next;
  });
  const campaign = saved as Campaign;
  deps.telemetry.info('campaign saved', {
    ...(owner.scope === 'store' ? { storeId: owner.id } : { tenantId: owner.id }),
    campaignId,
    scope: owner.scope,
    from: campaign.from,
    until: campaign.until,
    ...(campaign.plan ? { plan: campaign.plan } : {}),
    created,
    caller: request.caller,
  });
  return json(created ? 201 : 200, view(owner, campaign, now));
};

export const listCampaigns = async (deps: CampaignAdminDeps, request: HttpRequest): Promise<HttpResponse> => {
  const owner = await ownerOf(deps, request);
  const { campaigns } = await deps.campaigns.read(owner);
  const now = deps.clock.now();
  const sorted = [...campaigns].sort((a, b) => Date.parse(a.from) - Date.parse(b.from));
  return json(200, { campaigns: sorted.map((c) => view(owner, c, now)) });
};

export const deleteCampaign = async (
  deps: CampaignAdminDeps,
  request: HttpRequest,
): Promise<HttpResponse> => {
  const owner = await ownerOf(deps, request);
  const campaignId = campaignIdOf(request);
  let found: Campaign | undefined;
  await changeList(deps, owner, (list) => {
    found = list.find((c) => c.campaignId === campaignId);
    if (!found) throw new NotFoundError('campaign_not_found', `campaign ${campaignId} does not exist`);
    return list.filter((c) => c.campaignId !== campaignId);
  });
  deps.telemetry.info('campaign deleted', {
    ...(owner.scope === 'store' ? { storeId: owner.id } : { tenantId: owner.id }),
    campaignId,
    scope: owner.scope,
    caller: request.caller,
  });
  return json(204, undefined);
};
