import { describe, expect, it } from 'vitest';
import type { HttpRequest } from '../../../lambdas/core/http.js';
import type { TenantUsageKeys, TokenChange, TokenRecord, TokenStore } from '../../../lambdas/core/ports.js';
import {
  BACKFILL_BUDGET_MS,
  BACKFILL_PAGE,
  backfillUsageKey,
  backfillUsageKeys,
  createToken,
  DEFAULT_OVERLAP_SECONDS,
  listTokens,
  MAX_LIVE_TOKENS_PER_TENANT,
  revokeToken,
  rotateToken,
  type TenantTokenDeps,
} from '../../../lambdas/core/tenant-tokens.js';
import { hashToken, tokenIdOf } from '../../../lambdas/core/tokens.js';
import { fixedClock, recordingTelemetry, T0 } from '../support/fixtures.js';

/** The token table as a map: enough to check the use cases' decisions. */
class MemoryTokenStore implements TokenStore {
  readonly records = new Map<string, TokenRecord>();
  async put(record: TokenRecord): Promise<void> {
    if (this.records.has(record.tokenHash)) throw new Error('exists');
    this.records.set(record.tokenHash, { ...record });
  }
  async get(tokenHash: string): Promise<TokenRecord | undefined> {
    return this.records.get(tokenHash);
  }
  async listByTenant(tenantId: string): Promise<TokenRecord[]> {
    return [...this.records.values()].filter((r) => r.tenantId === tenantId);
  }
  /** Pages of `limit` records in insertion order; the cursor is the next index. */
  async tenantsPage(cursor: string | undefined, limit: number) {
    const all = [...this.records.values()];
    const start = cursor === undefined ? 0 : Number(cursor);
    const page = all.slice(start, start + limit);
    const next = start + limit < all.length ? String(start + limit) : undefined;
    return { tenantIds: [...new Set(page.map((r) => r.tenantId))], ...(next ? { cursor: next } : {}) };
  }
  async amend(tokenHash: string, change: TokenChange): Promise<boolean> {
    const record = this.records.get(tokenHash);
    if (!record) return false;
    // As the port says: an end only moves earlier.
    const later =
      change.expiresAt !== undefined &&
      record.expiresAt !== undefined &&
      record.expiresAt <= change.expiresAt;
    if (!later) this.records.set(tokenHash, { ...record, ...change });
    return true;
  }
}

/** One usage key per tenant, counting the calls; `failing` makes the next calls throw. */
class FakeUsageKeys implements TenantUsageKeys {
  readonly calls: string[] = [];
  failing: Error | undefined;
  async ensure(tenantId: string): Promise<string> {
    this.calls.push(tenantId);
    if (this.failing) throw this.failing;
    return `key-of-${tenantId}`;
  }
}

const setup = (now = T0) => {
  const tokens = new MemoryTokenStore();
  const usageKeys = new FakeUsageKeys();
  const { telemetry, logs } = recordingTelemetry();
  const deps: TenantTokenDeps = { tokens, usageKeys, clock: fixedClock(now), telemetry };
  return { tokens, usageKeys, deps, logs };
};

const request = (pathParameters: Record<string, string>, body?: string): HttpRequest => ({
  method: 'POST',
  resource: '/admin/tenants/{tenantId}/tokens',
  pathParameters,
  headers: {},
  body,
  caller: 'ops',
  requestId: 'r',
});

const issue = async (deps: TenantTokenDeps, tenantId = 't1') => {
  const res = await createToken(deps, request({ tenantId }));
  return res.body as { token: string; tokenId: string };
};

describe('createToken', () => {
  it('stores the hash only and names the token by its hash prefix', async () => {
    const { deps, tokens } = setup();
    const { token, tokenId } = await issue(deps);
    expect([...tokens.records.values()]).toEqual([
      { tokenHash: hashToken(token), tenantId: 't1', createdAt: T0, usageKey: 'key-of-t1' },
    ]);
    expect(tokenId).toBe(hashToken(token).slice(0, 12));
  });

  it("stores the tenant's usage key on the record, ensured for that tenant", async () => {
    const { deps, tokens, usageKeys } = setup();
    const { token } = await issue(deps, 't7');
    expect(usageKeys.calls).toEqual(['t7']);
    expect(tokens.records.get(hashToken(token))?.usageKey).toBe('key-of-t7');
  });

  it('writes nothing and lets the error through when the usage key cannot be had', async () => {
    const { deps, tokens, usageKeys } = setup();
    usageKeys.failing = Object.assign(new Error('API Gateway unavailable'), { $metadata: {} });
    await expect(createToken(deps, request({ tenantId: 't1' }))).rejects.toThrow('API Gateway unavailable');
    expect(tokens.records.size).toBe(0);
  });

  it('never puts the usage key in the answer (it is for the authorizer only)', async () => {
    const { deps } = setup();
    const res = await createToken(deps, request({ tenantId: 't1' }));
    expect(JSON.stringify(res.body)).not.toContain('key-of-t1');
  });

  it('never logs the token', async () => {
    const { deps, logs } = setup();
    const { token } = await issue(deps);
    expect(JSON.stringify(logs)).not.toContain(token);
  });

  it(`refuses a tenant's token beyond ${MAX_LIVE_TOKENS_PER_TENANT} live ones with 409`, async () => {
    const { deps, usageKeys } = setup();
    for (let i = 0; i < MAX_LIVE_TOKENS_PER_TENANT; i++) await issue(deps);
    await expect(createToken(deps, request({ tenantId: 't1' }))).rejects.toMatchObject({
      status: 409,
      code: 'too_many_tokens',
    });
    // Refused before any usage key work.
    expect(usageKeys.calls).toHaveLength(MAX_LIVE_TOKENS_PER_TENANT);
  });

  it('does not count revoked tokens toward the limit', async () => {
    const { deps } = setup();
    for (let i = 0; i < MAX_LIVE_TOKENS_PER_TENANT; i++) {
      const { tokenId } = await issue(deps);
      await revokeToken(deps, request({ tenantId: 't1', tokenId }));
    }
    await expect(issue(deps)).resolves.toMatchObject({ tokenId: expect.any(String) });
  });
});

describe('listTokens', () => {
  it('lists ids, creation time and status, oldest first, and no secret', async () => {
    const { deps, tokens } = setup();
    tokens.records.set('b'.repeat(64), { tokenHash: 'b'.repeat(64), tenantId: 't1', createdAt: T0 - 2000 });
    tokens.records.set('c'.repeat(64), {
      tokenHash: 'c'.repeat(64),
      tenantId: 't1',
      createdAt: T0 - 1000,
      revokedAt: T0 - 500,
    });
    tokens.records.set('d'.repeat(64), { tokenHash: 'd'.repeat(64), tenantId: 't2', createdAt: T0 });
    const res = await listTokens(deps, request({ tenantId: 't1' }));
    expect(res).toEqual({
      status: 200,
      body: {
        tenantId: 't1',
        tokens: [
          { tokenId: 'b'.repeat(12), status: 'active', createdAt: new Date(T0 - 2000).toISOString() },
          {
            tokenId: 'c'.repeat(12),
            status: 'revoked',
            createdAt: new Date(T0 - 1000).toISOString(),
            revokedAt: new Date(T0 - 500).toISOString(),
          },
        ],
      },
    });
    expect(JSON.stringify(res.body)).not.toContain('b'.repeat(13));
  });

  it('answers 400 naming tenantId for a bad one', async () => {
    const { deps } = setup();
    await expect(listTokens(deps, request({ tenantId: 'a/b' }))).rejects.toMatchObject({
      status: 400,
      message: expect.stringMatching(/^tenantId: /),
    });
  });
});

describe('revokeToken', () => {
  it('marks the token revoked now, idempotently', async () => {
    const { deps, tokens } = setup();
    const { token, tokenId } = await issue(deps);
    const first = await revokeToken(deps, request({ tenantId: 't1', tokenId }));
    const again = await revokeToken(deps, request({ tenantId: 't1', tokenId }));
    expect(first).toEqual(again);
    expect(first.body).toMatchObject({ tokenId, status: 'revoked', revokedAt: new Date(T0).toISOString() });
    expect(tokens.records.get(hashToken(token))?.revokedAt).toBe(T0);
  });

  it("answers 404 for another tenant's token id, leaving it alone", async () => {
    const { deps, tokens } = setup();
    const { token, tokenId } = await issue(deps, 't2');
    await expect(revokeToken(deps, request({ tenantId: 't1', tokenId }))).rejects.toMatchObject({
      status: 404,
      code: 'token_not_found',
    });
    expect(tokens.records.get(hashToken(token))?.revokedAt).toBeUndefined();
  });

  it.each(['ABCDEF012345', 'abc', 'g'.repeat(12)])('answers 400 naming tokenId for %s', async (tokenId) => {
    const { deps } = setup();
    await expect(revokeToken(deps, request({ tenantId: 't1', tokenId }))).rejects.toMatchObject({
      status: 400,
      message: expect.stringMatching(/^tokenId: /),
    });
  });
});

describe('rotateToken', () => {
  it('issues a new token and lets the old one expire after the default overlap', async () => {
    const { deps, tokens } = setup();
    const old = await issue(deps);
    const res = await rotateToken(deps, request({ tenantId: 't1', tokenId: old.tokenId }));
    const body = res.body as { token: string; tokenId: string; replaced: Record<string, unknown> };
    expect(res.status).toBe(201);
    expect(tokens.records.get(hashToken(body.token))).toEqual({
      tokenHash: hashToken(body.token),
      tenantId: 't1',
      createdAt: T0,
      usageKey: 'key-of-t1',
    });
    expect(tokens.records.get(hashToken(old.token))?.expiresAt).toBe(T0 + DEFAULT_OVERLAP_SECONDS * 1000);
    expect(body.replaced).toMatchObject({ tokenId: old.tokenId, status: 'expiring' });
    expect(body.tokenId).toBe(tokenIdOf(hashToken(body.token)));
  });

  it('gives the new token the usage key even when the old one had none (the migration path)', async () => {
    const { deps, tokens } = setup();
    const old = await issue(deps);
    const { usageKey: _dropped, ...legacy } = tokens.records.get(hashToken(old.token)) as TokenRecord;
    tokens.records.set(legacy.tokenHash, legacy);
    const res = await rotateToken(deps, request({ tenantId: 't1', tokenId: old.tokenId }));
    const { token } = res.body as { token: string };
    expect(tokens.records.get(hashToken(token))?.usageKey).toBe('key-of-t1');
  });

  it('leaves the old token untouched when the usage key cannot be had', async () => {
    const { deps, tokens, usageKeys } = setup();
    const old = await issue(deps);
    usageKeys.failing = new Error('API Gateway unavailable');
    await expect(rotateToken(deps, request({ tenantId: 't1', tokenId: old.tokenId }))).rejects.toThrow(
      'API Gateway unavailable',
    );
    expect([...tokens.records.values()]).toEqual([
      { tokenHash: hashToken(old.token), tenantId: 't1', createdAt: T0, usageKey: 'key-of-t1' },
    ]);
  });

  it('takes overlapSeconds from the body; 0 ends the old token now', async () => {
    const { deps, tokens } = setup();
    const old = await issue(deps);
    const res = await rotateToken(
      deps,
      request({ tenantId: 't1', tokenId: old.tokenId }, '{"overlapSeconds":0}'),
    );
    expect((res.body as { replaced: unknown }).replaced).toMatchObject({ status: 'expired' });
    expect(tokens.records.get(hashToken(old.token))?.expiresAt).toBe(T0);
  });

  it('never extends an earlier, shorter expiry', async () => {
    const { deps, tokens } = setup();
    const old = await issue(deps);
    await tokens.amend(hashToken(old.token), { expiresAt: T0 + 5000 });
    await rotateToken(deps, request({ tenantId: 't1', tokenId: old.tokenId }, '{"overlapSeconds":600}'));
    expect(tokens.records.get(hashToken(old.token))?.expiresAt).toBe(T0 + 5000);
  });

  it.each([
    ['{"overlapSeconds":-1}', 'overlapSeconds'],
    ['{"overlapSeconds":1.5}', 'overlapSeconds'],
    ['{"overlapSeconds":99999999}', 'overlapSeconds'],
    ['{"overlap":5}', 'body'],
    ['[]', 'body'],
  ])('answers 400 for the body %s naming %s', async (raw, field) => {
    const { deps } = setup();
    const old = await issue(deps);
    await expect(
      rotateToken(deps, request({ tenantId: 't1', tokenId: old.tokenId }, raw)),
    ).rejects.toMatchObject({
      status: 400,
      message: expect.stringMatching(new RegExp(`^${field}: `)),
    });
  });

  it('answers 409 for a revoked token', async () => {
    const { deps } = setup();
    const old = await issue(deps);
    await revokeToken(deps, request({ tenantId: 't1', tokenId: old.tokenId }));
    await expect(rotateToken(deps, request({ tenantId: 't1', tokenId: old.tokenId }))).rejects.toMatchObject({
      status: 409,
      code: 'token_not_live',
    });
  });
});

describe('backfillUsageKey', () => {
  const legacy = (tenantId: string, n: number): TokenRecord => ({
    tokenHash: hashToken(`legacy-${tenantId}-${n}`),
    tenantId,
    createdAt: T0 - 1000,
  });

  it('writes the tenant’s usage key onto its tokens that lack it, and only the tenant’s', async () => {
    const { deps, tokens, usageKeys } = setup();
    for (const record of [legacy('t1', 1), legacy('t1', 2), legacy('t2', 1)]) await tokens.put(record);
    const { token } = await issue(deps, 't1'); // already carries the key
    const res = await backfillUsageKey(deps, request({ tenantId: 't1' }));
    expect({
      res: [res.status, res.body],
      keys: [...tokens.records.values()].map((r) => [r.tenantId, r.usageKey]).sort(),
      ensured: usageKeys.calls,
      issued: tokens.records.get(hashToken(token))?.usageKey,
    }).toEqual({
      res: [200, { tenantId: 't1', tokensUpdated: 2 }],
      keys: [
        ['t1', 'key-of-t1'],
        ['t1', 'key-of-t1'],
        ['t1', 'key-of-t1'],
        ['t2', undefined],
      ],
      ensured: ['t1', 't1'],
      issued: 'key-of-t1',
    });
  });

  it('is idempotent: a second call finds nothing to update', async () => {
    const { deps, tokens } = setup();
    await tokens.put(legacy('t1', 1));
    await backfillUsageKey(deps, request({ tenantId: 't1' }));
    const again = await backfillUsageKey(deps, request({ tenantId: 't1' }));
    expect(again.body).toEqual({ tenantId: 't1', tokensUpdated: 0 });
  });

  it('changes nothing when the usage key cannot be had', async () => {
    const { deps, tokens, usageKeys } = setup();
    await tokens.put(legacy('t1', 1));
    usageKeys.failing = new Error('API Gateway unavailable');
    await expect(backfillUsageKey(deps, request({ tenantId: 't1' }))).rejects.toThrow(
      'API Gateway unavailable',
    );
    expect([...tokens.records.values()].map((r) => r.usageKey)).toEqual([undefined]);
  });

  it('answers 400 for a malformed tenant id', async () => {
    const { deps } = setup();
    await expect(backfillUsageKey(deps, request({ tenantId: 'no spaces' }))).rejects.toMatchObject({
      status: 400,
    });
  });
});

describe('backfillUsageKeys (every tenant, page by page)', () => {
  const bulk = (query?: Record<string, string>): HttpRequest => ({
    ...request({}),
    resource: '/admin/usage-keys/backfill',
    ...(query ? { query } : {}),
  });

  it('pages through the token table until no cursor is left, giving every token its tenant’s key', async () => {
    const { deps, tokens } = setup();
    const tenants = ['t1', 't2', 't3'];
    for (let i = 0; i < BACKFILL_PAGE + 10; i++) {
      const tenantId = tenants[i % 3] as string;
      await tokens.put({ tokenHash: hashToken(`old-${i}`), tenantId, createdAt: T0 - 1000 });
    }
    const pages: unknown[] = [];
    let cursor: string | undefined;
    do {
      const res = await backfillUsageKeys(deps, bulk(cursor ? { cursor } : undefined));
      const body = res.body as { tenants: { tenantId: string; tokensUpdated: number }[]; cursor?: string };
      pages.push(body.tenants);
      cursor = body.cursor;
    } while (cursor);
    expect({
      pages,
      missing: [...tokens.records.values()].filter((r) => r.usageKey !== `key-of-${r.tenantId}`).length,
    }).toEqual({
      // The first page's tenants get all their tokens at once (20 each); the second page (records 50–59,
      // from t3 on) finds them done.
      pages: [
        [
          { tenantId: 't1', tokensUpdated: 20 },
          { tenantId: 't2', tokensUpdated: 20 },
          { tenantId: 't3', tokensUpdated: 20 },
        ],
        [
          { tenantId: 't3', tokensUpdated: 0 },
          { tenantId: 't1', tokensUpdated: 0 },
          { tenantId: 't2', tokensUpdated: 0 },
        ],
      ],
      missing: 0,
    });
  });

  it('answers 400 for an unknown query parameter', async () => {
    const { deps } = setup();
    await expect(backfillUsageKeys(deps, bulk({ limit: '5' }))).rejects.toMatchObject({ status: 400 });
  });

  it('answers 400 for a cursor it did not make', async () => {
    const { deps } = setup();
    await expect(backfillUsageKeys(deps, bulk({ cursor: 'not-a-cursor' }))).rejects.toMatchObject({
      status: 400,
    });
  });

  describe(`within its time budget (${BACKFILL_BUDGET_MS} ms; API Gateway creates 5 keys a second)`, () => {
    /** Each new tenant's key takes 4 s of the clock, as a throttled CreateApiKey might. */
    const slowSetup = () => {
      const base = setup();
      let now = T0;
      base.deps.clock = { now: () => now, sleep: async () => {} };
      const ensure = base.usageKeys.ensure.bind(base.usageKeys);
      base.usageKeys.ensure = async (tenantId: string) => {
        now += 4000;
        return ensure(tenantId);
      };
      return base;
    };
    const seed = async (tokens: ReturnType<typeof setup>['tokens'], count: number) => {
      for (let i = 0; i < count; i++)
        await tokens.put({ tokenHash: hashToken(`old-${i}`), tenantId: `t${i}`, createdAt: T0 - 1000 });
    };
    type Page = { tenants: { tenantId: string }[]; cursor?: string };

    it('starts no tenant after the budget and answers with a cursor (three tenants, 12 s)', async () => {
      const { deps, tokens } = slowSetup();
      await seed(tokens, 6);
      const res = await backfillUsageKeys(deps, bulk());
      expect((res.body as Page).tenants.map((t) => t.tenantId)).toEqual(['t0', 't1', 't2']);
    });

    it('resumes at the first tenant it did not do', async () => {
      const { deps, tokens } = slowSetup();
      await seed(tokens, 6);
      const first = (await backfillUsageKeys(deps, bulk())).body as Page;
      const second = (await backfillUsageKeys(deps, bulk({ cursor: first.cursor ?? '' }))).body as Page;
      expect(second.tenants.map((t) => t.tenantId)).toEqual(['t3', 't4', 't5']);
    });

    it('gives every token its key over the calls, then answers without a cursor', async () => {
      const { deps, tokens } = slowSetup();
      await seed(tokens, 7);
      let cursor: string | undefined;
      let calls = 0;
      do {
        const body = (await backfillUsageKeys(deps, bulk(cursor ? { cursor } : undefined))).body as Page;
        cursor = body.cursor;
        calls++;
      } while (cursor && calls < 10);
      expect({
        calls,
        missing: [...tokens.records.values()].filter((r) => r.usageKey === undefined).length,
      }).toEqual({ calls: 3, missing: 0 });
    });
  });
});
