import type { z } from 'zod';
import { BacklogQuery } from '../operations.js';
import type { RouteId } from '../routes.js';
import { BackfillQuery } from '../tenant-tokens.js';
import {
  CAMPAIGN_EXAMPLES,
  CAMPAIGN_VIEW_EXAMPLE,
  PATH_EXAMPLES,
  STORE_EXAMPLE,
  TASK_EXAMPLES,
  TOKEN_EXAMPLE,
  TOKEN_VIEW_EXAMPLE,
} from './examples.js';
import type { ComponentName } from './components.js';

/** A request example and the status local mode and the stack answer it with. */
export interface RequestExample {
  summary: string;
  value: unknown;
  status: number;
}

export interface RouteDoc {
  summary: string;
  description?: string;
  tag: 'Integrator' | 'Stores' | 'Tokens' | 'Operations' | 'Campaigns';
  body?: { schema: ComponentName; required: boolean; examples: Record<string, RequestExample> };
  /** The handler's own query schema (each key becomes a query parameter). */
  query?: z.ZodObject;
  /** Success statuses; the first is what a call with no request example answers. */
  success: { status: number; description: string }[];
  /** The body of the success answers (absent: 204, no body). */
  response?: { schema: ComponentName; example: unknown };
  errors: number[];
}

const { storeId: _storeId, ...campaignFields } = CAMPAIGN_VIEW_EXAMPLE;
const TENANT_CAMPAIGN_EXAMPLE = { ...campaignFields, tenantId: PATH_EXAMPLES.tenantId };

const STORE_ERRORS = [400, 401, 403, 404, 503];
const TENANT_ERRORS = [400, 401, 403, 503];

/**
 * Per route: what the document says beyond the schemas. Keyed by RouteId, so a route added to ROUTES
 * without its documentation does not compile.
 */
/** The PUT of a store or a tenant campaign: one text, one set of examples, its own errors and answer. */
const putCampaignDoc = (summary: string, example: object, errors: number[]): RouteDoc => ({
  tag: 'Campaigns',
  summary,
  description:
    'Between `from` (inclusive) and `until` (exclusive) the store runs with the campaign’s plan and ' +
    'overrides, then with its own again, with no call at the boundaries. A store campaign wins over a ' +
    'tenant campaign; among active ones of one kind the latest `from` wins. A change takes effect on ' +
    'workers within 30 s. At most 20 campaigns per store or tenant (ended ones are dropped after 30 days).',
  body: {
    schema: 'PutCampaignRequest',
    required: true,
    examples: {
      create: {
        summary: 'Black Friday on the enterprise plan: 201',
        value: CAMPAIGN_EXAMPLES.blackFriday,
        status: 201,
      },
      replace: { summary: 'The same campaign again: 200', value: CAMPAIGN_EXAMPLES.blackFriday, status: 200 },
      tooLong: { summary: 'A window over 90 days: refused', value: CAMPAIGN_EXAMPLES.tooLong, status: 400 },
      backwards: {
        summary: '`until` before `from`: refused',
        value: CAMPAIGN_EXAMPLES.backwards,
        status: 400,
      },
    },
  },
  success: [
    { status: 201, description: 'created' },
    { status: 200, description: 'replaced' },
  ],
  response: { schema: 'Campaign', example },
  errors: [...errors, 409, 413, 415],
});

export const ROUTE_DOCS: Record<RouteId, RouteDoc> = {
  submitTask: {
    tag: 'Integrator',
    summary: 'Submit one task',
    description:
      '202 means the task is durable in the store queue and will be delivered or dead-lettered. ' +
      'Posting the same eventId again is safe: the effect happens once.',
    body: {
      schema: 'Task',
      required: true,
      examples: {
        inventory: { summary: 'An inventory update', value: TASK_EXAMPLES.inventory, status: 202 },
        price: { summary: 'A price update', value: TASK_EXAMPLES.price, status: 202 },
        order: { summary: 'An order sync (high priority type)', value: TASK_EXAMPLES.order, status: 202 },
        invalid: { summary: 'A negative quantity: refused', value: TASK_EXAMPLES.invalid, status: 400 },
      },
    },
    success: [{ status: 202, description: 'accepted' }],
    response: {
      schema: 'TaskAccepted',
      example: { storeId: PATH_EXAMPLES.storeId, eventId: PATH_EXAMPLES.eventId, status: 'accepted' },
    },
    errors: [400, 401, 403, 409, 413, 415, 429, 503],
  },
  submitBatch: {
    tag: 'Integrator',
    summary: 'Submit up to 100 tasks',
    description:
      'Each task is validated on its own: valid ones are accepted, the others are listed in `rejected` ' +
      'with the reason. The whole batch is refused (400) only when the body itself is malformed.',
    body: {
      schema: 'BatchRequest',
      required: true,
      examples: {
        mixed: {
          summary: 'Two valid tasks and one invalid: 202, the invalid one rejected',
          value: {
            tasks: [
              { ...TASK_EXAMPLES.inventory, eventId: 'batch-1' },
              { ...TASK_EXAMPLES.price, eventId: 'batch-2' },
              { ...TASK_EXAMPLES.invalid, eventId: 'batch-3' },
            ],
          },
          status: 202,
        },
        empty: { summary: 'No tasks: refused', value: { tasks: [] }, status: 400 },
      },
    },
    success: [{ status: 202, description: 'each task accepted or rejected' }],
    response: {
      schema: 'BatchResult',
      example: {
        accepted: ['batch-1', 'batch-2'],
        rejected: [
          {
            eventId: 'batch-3',
            error: {
              code: 'invalid_request',
              message: 'tasks[2].payload.quantity: Too small: expected number to be >=0',
            },
          },
        ],
      },
    },
    errors: [400, 401, 403, 409, 413, 415, 429, 503],
  },
  taskStatus: {
    tag: 'Integrator',
    summary: "A task's delivery status",
    description: '"pending" also covers an eventId never seen: ingest keeps no record of its own.',
    success: [{ status: 200, description: 'the status' }],
    response: {
      schema: 'TaskStatus',
      example: {
        storeId: PATH_EXAMPLES.storeId,
        eventId: PATH_EXAMPLES.eventId,
        status: 'delivered',
        attempts: 1,
      },
    },
    errors: [400, 401, 403, 429, 503],
  },
  putStore: {
    tag: 'Stores',
    summary: 'Create or update a store',
    description: "Creates the store's work queue and DLQ. Idempotent: a repeated PUT answers 200.",
    body: {
      schema: 'PutStoreRequest',
      required: true,
      examples: {
        create: {
          summary: 'A new store: 201',
          value: { tenantId: PATH_EXAMPLES.tenantId, marketplace: 'mercadolivre', plan: 'pro' },
          status: 201,
        },
        update: {
          summary: 'The same store again, with an override: 200',
          value: {
            tenantId: PATH_EXAMPLES.tenantId,
            marketplace: 'mercadolivre',
            plan: 'pro',
            overrides: { ratePerSecond: 20 },
          },
          status: 200,
        },
        invalid: {
          summary: 'An unknown plan: refused',
          value: { tenantId: PATH_EXAMPLES.tenantId, marketplace: 'mercadolivre', plan: 'gold' },
          status: 400,
        },
      },
    },
    success: [
      { status: 201, description: 'created' },
      { status: 200, description: 'updated' },
    ],
    response: { schema: 'Store', example: STORE_EXAMPLE },
    errors: [400, 401, 403, 409, 413, 415, 503],
  },
  getStore: {
    tag: 'Stores',
    summary: 'A store: configuration, effective policy, queue counts, live consumers',
    success: [{ status: 200, description: 'the store' }],
    response: { schema: 'Store', example: STORE_EXAMPLE },
    errors: STORE_ERRORS,
  },
  patchStore: {
    tag: 'Stores',
    summary: "Change a store's status, plan or overrides",
    description:
      'Resuming a store with backlog makes it consumed again without any new task. `overrides` replaces all the ' +
      "store's overrides (null: none); `setOverrides` sets the fields it names and keeps the others (null removes " +
      'one); not both in one request.',
    body: {
      schema: 'PatchStoreRequest',
      required: true,
      examples: {
        pause: { summary: 'Pause', value: { status: 'paused' }, status: 200 },
        resume: { summary: 'Resume', value: { status: 'active' }, status: 200 },
        setOverride: {
          summary: "Set one override, keep the store's others (null removes one)",
          value: { setOverrides: { throttleScope: 'task' } },
          status: 200,
        },
        empty: { summary: 'Nothing to change: refused', value: {}, status: 400 },
      },
    },
    success: [{ status: 200, description: 'the store after the change' }],
    response: { schema: 'Store', example: { ...STORE_EXAMPLE, status: 'paused' } },
    // 409 concurrent_update: every try lost to another write of the store (lambdas/core/store-writes.ts).
    errors: [...STORE_ERRORS, 409, 413, 415],
  },
  redriveDeadLetters: {
    tag: 'Operations',
    summary: "Move the store's dead letters back to its work queue",
    success: [{ status: 202, description: 'the move has started' }],
    response: { schema: 'RedriveResult', example: { storeId: PATH_EXAMPLES.storeId, moving: 3 } },
    errors: STORE_ERRORS,
  },
  createToken: {
    tag: 'Tokens',
    summary: 'Issue an integrator token for a tenant (shown once)',
    success: [{ status: 201, description: 'the token' }],
    response: {
      schema: 'TokenCreated',
      example: { token: TOKEN_EXAMPLE, tokenId: PATH_EXAMPLES.tokenId, tenantId: PATH_EXAMPLES.tenantId },
    },
    errors: [...TENANT_ERRORS, 409],
  },
  listTokens: {
    tag: 'Tokens',
    summary: "A tenant's tokens (never the secret)",
    success: [{ status: 200, description: 'the tokens, oldest first' }],
    response: {
      schema: 'TokenList',
      example: { tenantId: PATH_EXAMPLES.tenantId, tokens: [TOKEN_VIEW_EXAMPLE] },
    },
    errors: TENANT_ERRORS,
  },
  revokeToken: {
    tag: 'Tokens',
    summary: 'Revoke a token (idempotent; effective within the authorizer cache TTL)',
    success: [{ status: 200, description: 'the revoked token' }],
    response: {
      schema: 'TokenView',
      example: { ...TOKEN_VIEW_EXAMPLE, status: 'revoked', revokedAt: '2026-12-01T13:00:00.000Z' },
    },
    errors: [...TENANT_ERRORS, 404],
  },
  rotateToken: {
    tag: 'Tokens',
    summary: 'Issue a replacement token; the old one keeps working for the overlap window',
    body: {
      schema: 'RotateTokenRequest',
      required: false,
      examples: {
        tenMinutes: { summary: 'Ten minutes of overlap', value: { overlapSeconds: 600 }, status: 201 },
        tooLong: {
          summary: 'An overlap over 7 days: refused',
          value: { overlapSeconds: 10_000_000 },
          status: 400,
        },
      },
    },
    success: [{ status: 201, description: 'the new token, and the old one with its expiry' }],
    response: {
      schema: 'TokenRotated',
      example: {
        token: TOKEN_EXAMPLE,
        tokenId: 'fedcba987654',
        tenantId: PATH_EXAMPLES.tenantId,
        replaced: { ...TOKEN_VIEW_EXAMPLE, status: 'expiring', expiresAt: '2026-12-01T13:10:00.000Z' },
      },
    },
    errors: [...TENANT_ERRORS, 404, 409, 413, 415],
  },
  backfillUsageKey: {
    tag: 'Tokens',
    summary: "Put the tenant's usage-plan key on its tokens issued before per-tenant throttling",
    success: [{ status: 200, description: 'how many token records changed' }],
    response: { schema: 'UsageKeyBackfill', example: { tenantId: PATH_EXAMPLES.tenantId, tokensUpdated: 0 } },
    errors: TENANT_ERRORS,
  },
  backfillUsageKeys: {
    tag: 'Tokens',
    summary: 'The same for every tenant, one page at a time (call again with `cursor` until none)',
    query: BackfillQuery,
    success: [{ status: 200, description: 'one page of tenants' }],
    response: {
      schema: 'UsageKeysBackfill',
      example: { tenants: [{ tenantId: PATH_EXAMPLES.tenantId, tokensUpdated: 0 }] },
    },
    errors: [400, 401, 403, 503],
  },
  listBacklog: {
    tag: 'Operations',
    summary: 'Stores with work, oldest task first',
    query: BacklogQuery,
    success: [{ status: 200, description: 'one page of busy stores' }],
    response: {
      schema: 'BacklogPage',
      example: {
        stores: [{ ...STORE_EXAMPLE, activeSince: '2026-12-01T12:00:00.000Z', busySeconds: 42 }],
      },
    },
    errors: [400, 401, 403, 503],
  },
  purgeStoreQueue: {
    tag: 'Operations',
    summary: "Discard every task in the store's work queue (not its DLQ); cannot be undone",
    body: {
      schema: 'PurgeRequest',
      required: true,
      examples: {
        confirmed: {
          summary: 'Confirmed with the store id',
          value: { confirm: PATH_EXAMPLES.storeId, reason: 'catalog import sent twice' },
          status: 202,
        },
        unconfirmed: {
          summary: 'Another id in confirm: refused',
          value: { confirm: 'other-store' },
          status: 400,
        },
      },
    },
    success: [{ status: 202, description: 'purged' }],
    response: {
      schema: 'PurgeResult',
      example: { storeId: PATH_EXAMPLES.storeId, discarded: 1200, status: 'purged' },
    },
    errors: [...STORE_ERRORS, 409, 413, 415],
  },
  storeMeasures: {
    tag: 'Operations',
    summary: 'The store view plus the pattern’s per-store measures',
    success: [{ status: 200, description: 'the store and its measures' }],
    response: {
      schema: 'StoreMeasures',
      example: {
        ...STORE_EXAMPLE,
        measures: {
          backlog: 0,
          oldestAgeSeconds: 0,
          deadLetters: 0,
          activeSince: null,
          drainingSeconds: 0,
          lastDrainSeconds: 4,
          lastIdleAt: '2026-12-01T12:00:04.000Z',
          attentions: { republished: 2, resent: 0, discarded: 1 },
          blocks: { lease: 0, rateLimit: 0 },
        },
      },
    },
    errors: STORE_ERRORS,
  },
  putStoreCampaign: putCampaignDoc(
    'Create or replace a campaign window for a store',
    { ...CAMPAIGN_VIEW_EXAMPLE },
    STORE_ERRORS,
  ),
  listStoreCampaigns: {
    tag: 'Campaigns',
    summary: 'The campaign windows of a store, by `from`',
    success: [{ status: 200, description: 'the campaigns' }],
    response: { schema: 'CampaignList', example: { campaigns: [{ ...CAMPAIGN_VIEW_EXAMPLE }] } },
    errors: STORE_ERRORS,
  },
  deleteStoreCampaign: {
    tag: 'Campaigns',
    summary: 'Delete a campaign window (the store returns to its own policy within 30 s if it was active)',
    success: [{ status: 204, description: 'deleted' }],
    errors: [...STORE_ERRORS, 404, 409],
  },
  putTenantCampaign: putCampaignDoc(
    'Create or replace a campaign window for every store of a tenant',
    TENANT_CAMPAIGN_EXAMPLE,
    TENANT_ERRORS,
  ),
  listTenantCampaigns: {
    tag: 'Campaigns',
    summary: 'The campaign windows of every store of a tenant, by `from`',
    success: [{ status: 200, description: 'the campaigns' }],
    response: { schema: 'CampaignList', example: { campaigns: [TENANT_CAMPAIGN_EXAMPLE] } },
    errors: TENANT_ERRORS,
  },
  deleteTenantCampaign: {
    tag: 'Campaigns',
    summary: 'Delete a campaign window (the store returns to its own policy within 30 s if it was active)',
    success: [{ status: 204, description: 'deleted' }],
    errors: [...TENANT_ERRORS, 404, 409],
  },
};
