import { describe, expect, it, vi } from 'vitest';
import { ConflictError, NotFoundError } from '../../../lambdas/core/errors.js';
import type { StoreRegistry } from '../../../lambdas/core/ports.js';
import type { StoreRecord } from '../../../lambdas/core/store-model.js';
import { nextRevision, STORE_WRITE_ATTEMPTS, writeStore } from '../../../lambdas/core/store-writes.js';
import { storeRecord } from '../support/fixtures.js';

/**
 * A Stores table of one record with DynamoDB's conditions (create if absent, replace if the revision read is
 * still there); `meanwhile` runs after each read, as another caller's write landing between read and write.
 */
const table = (
  initial: StoreRecord | undefined,
  meanwhile: (read: number) => StoreRecord | undefined = () => undefined,
) => {
  let record = initial;
  let reads = 0;
  const stores = {
    get: vi.fn<StoreRegistry['get']>(async () => {
      const seen = record;
      const other = meanwhile(++reads);
      if (other) record = other;
      return seen;
    }),
    create: vi.fn<StoreRegistry['create']>(async (next) => {
      if (record) return false;
      record = next;
      return true;
    }),
    replace: vi.fn<StoreRegistry['replace']>(async (next, seen) => {
      if (record?.revision !== seen.revision) return false;
      record = next;
      return true;
    }),
    scan: vi.fn<StoreRegistry['scan']>(),
  };
  return { stores, now: () => record };
};
const paused = async (current: StoreRecord | undefined) => ({
  ...(current ?? storeRecord()),
  status: 'paused' as const,
});

describe('writeStore', () => {
  it('creates a new store with revision 1, only if none exists', async () => {
    const { stores, now } = table(undefined);
    const written = await writeStore(stores, 'store-1', paused);
    expect(written).toEqual({
      before: undefined,
      after: { ...storeRecord(), status: 'paused', revision: 1 },
    });
    expect(now()).toEqual(written.after);
    expect(stores.replace).not.toHaveBeenCalled();
  });

  it('replaces the record it read with the next revision, conditional on the one it read', async () => {
    const read = storeRecord({ revision: 7 });
    const { stores } = table(read);
    const { before, after } = await writeStore(stores, 'store-1', paused);
    expect({ before, after }).toEqual({ before: read, after: { ...read, status: 'paused', revision: 8 } });
    expect(stores.replace).toHaveBeenCalledWith(after, read);
  });

  it('gives a record from before revisions revision 1', async () => {
    const { stores } = table(storeRecord());
    expect((await writeStore(stores, 'store-1', paused)).after.revision).toBe(1);
    expect(nextRevision(undefined)).toBe(1);
    expect(nextRevision(storeRecord({ revision: 3 }))).toBe(4);
  });

  it('builds again on what another write left, so both changes hold', async () => {
    // Another caller changes the plan between this change's first read and its write.
    const other = storeRecord({ plan: 'enterprise', revision: 2 });
    const { stores, now } = table(storeRecord({ revision: 1 }), (read) => (read === 1 ? other : undefined));
    const change = vi.fn(paused);
    const { before } = await writeStore(stores, 'store-1', change);
    expect(change.mock.calls.map(([current]) => current?.revision)).toEqual([1, 2]);
    expect(before).toEqual(other);
    expect(now()).toEqual({ ...other, status: 'paused', revision: 3 });
  });

  it('reads again when another caller created the store first, and updates it', async () => {
    const created = storeRecord({ plan: 'pro', revision: 1 });
    const { stores, now } = table(undefined, (read) => (read === 1 ? created : undefined));
    const { before } = await writeStore(stores, 'store-1', paused);
    expect(before).toEqual(created);
    expect(now()).toEqual({ ...created, status: 'paused', revision: 2 });
  });

  it(`gives up with 409 concurrent_update after ${STORE_WRITE_ATTEMPTS} lost writes, having written nothing`, async () => {
    let revision = 1;
    const { stores, now } = table(storeRecord({ revision }), () => storeRecord({ revision: ++revision }));
    const error = await writeStore(stores, 'store-1', paused).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConflictError);
    expect(error).toMatchObject({
      status: 409,
      code: 'concurrent_update',
      message: `store store-1 changed meanwhile, ${STORE_WRITE_ATTEMPTS} times: retry`,
    });
    expect(stores.get).toHaveBeenCalledTimes(STORE_WRITE_ATTEMPTS);
    expect(now()?.status).toBe('active');
  });

  it('lets the change refuse (a 404) without writing', async () => {
    const { stores } = table(undefined);
    const refuse = async () => {
      throw new NotFoundError('store_not_found', 'store store-1 does not exist');
    };
    await expect(writeStore(stores, 'store-1', refuse)).rejects.toBeInstanceOf(NotFoundError);
    expect([stores.create.mock.calls.length, stores.replace.mock.calls.length]).toEqual([0, 0]);
  });
});
