/**
 * The document's examples. The documentation test sends each request example to local mode (path
 * parameters from PATH_EXAMPLES, a live token and token id in place of these placeholders) and expects
 * the status written beside it, so every example here is one that works.
 */
export const PATH_EXAMPLES = {
  storeId: 'acme-store-1',
  tenantId: 'acme',
  eventId: 'inv-1001',
  tokenId: '0123456789ab',
  campaignId: 'black-friday',
} as const;

export const TOKEN_EXAMPLE = 'aqt_2c9Vd8qQm1bS4yJ0nH7rZt6kWf3pLx5aGe9uTi2oRcN';

export const STORE_EXAMPLE = {
  storeId: PATH_EXAMPLES.storeId,
  tenantId: PATH_EXAMPLES.tenantId,
  marketplace: 'mercadolivre',
  plan: 'pro',
  status: 'active',
  policy: {
    maxConcurrentConsumers: 3,
    maxMessagesPerSlice: 200,
    maxSliceSeconds: 20,
    ratePerSecond: 20,
    maxAttempts: 8,
    priority: 'normal',
    throttleScope: 'store',
  },
  effective: {
    plan: 'pro',
    policy: {
      maxConcurrentConsumers: 3,
      maxMessagesPerSlice: 200,
      maxSliceSeconds: 20,
      ratePerSecond: 20,
      maxAttempts: 8,
      priority: 'normal',
      throttleScope: 'store',
    },
    source: 'store',
  },
  queue: { backlog: 0, inFlight: 0, delayed: 0, deadLetters: 0, oldestAgeSeconds: 0 },
  activeConsumers: 0,
  rate: { configured: 20, effective: 20, reason: 'policy' },
};

export const TASK_EXAMPLES = {
  inventory: {
    eventId: PATH_EXAMPLES.eventId,
    type: 'inventory.update',
    payload: { sku: 'SKU-42', quantity: 7 },
    entityId: 'SKU-42',
    version: 12,
  },
  price: {
    eventId: 'price-2001',
    type: 'price.update',
    payload: { sku: 'SKU-42', amount: 129.9, currency: 'BRL' },
  },
  order: {
    eventId: 'order-3001',
    type: 'orders.sync',
    payload: { orderId: 'ML-3001', status: 'paid', updatedAt: '2026-12-01T12:00:00Z' },
  },
  invalid: { eventId: 'inv-1002', type: 'inventory.update', payload: { sku: 'SKU-42', quantity: -1 } },
} as const;

export const TOKEN_VIEW_EXAMPLE = {
  tokenId: PATH_EXAMPLES.tokenId,
  status: 'active',
  createdAt: '2026-12-01T12:00:00.000Z',
};

/** One example body per error status, as the handlers and the gateway answer them. */
export const ERROR_EXAMPLES: Record<number, { code: string; message: string }> = {
  400: { code: 'invalid_request', message: 'payload.quantity: Too small: expected number to be >=0' },
  401: { code: 'unauthorized', message: 'missing or invalid credential' },
  403: { code: 'forbidden', message: 'this credential does not own the store' },
  404: { code: 'store_not_found', message: 'store acme-store-1 does not exist' },
  409: { code: 'store_not_accepting', message: 'store acme-store-1 is disabled and accepts no tasks' },
  413: { code: 'payload_too_large', message: 'request body exceeds 65536 bytes' },
  415: { code: 'unsupported_media_type', message: 'content-type must be application/json' },
  429: { code: 'throttled', message: 'too many requests for this tenant; retry later' },
  503: { code: 'dependency_unavailable', message: 'the store queue is unavailable; nothing was accepted' },
};

export const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'invalid input; the message names the field',
  401: 'missing or bad credential',
  403: "the caller's tenant does not own the store, or IAM denied the call",
  404: 'unknown store (or token)',
  409: 'the store cannot accept tasks, or the change conflicts with its state',
  413: 'body too large',
  415: 'the body is not JSON',
  429: 'throttled; see Retry-After',
  503: 'a dependency failed and nothing was accepted; retry',
};

export const CAMPAIGN_EXAMPLES = {
  blackFriday: {
    from: '2026-11-27T00:00:00Z',
    until: '2026-11-30T00:00:00Z',
    plan: 'enterprise',
    overrides: { ratePerSecond: 40 },
    note: 'Black Friday',
  },
  tooLong: { from: '2026-11-01T00:00:00Z', until: '2027-03-01T00:00:00Z', plan: 'enterprise' },
  backwards: { from: '2026-11-30T00:00:00Z', until: '2026-11-27T00:00:00Z' },
} as const;

export const CAMPAIGN_VIEW_EXAMPLE = {
  campaignId: PATH_EXAMPLES.campaignId,
  storeId: PATH_EXAMPLES.storeId,
  from: '2026-11-27T00:00:00.000Z',
  until: '2026-11-30T00:00:00.000Z',
  plan: 'enterprise',
  overrides: { ratePerSecond: 40 },
  note: 'Black Friday',
  createdAt: '2026-11-01T12:00:00.000Z',
  updatedAt: '2026-11-01T12:00:00.000Z',
  state: 'scheduled',
};
