import { ConflictError } from './errors.js';
import type { StoreRegistry } from './ports.js';
import type { StoreRecord } from './store-model.js';

/** A change that keeps losing to other writes gives up after this many reads (409 `concurrent_update`). */
export const STORE_WRITE_ATTEMPTS = 5;

/** The revision a write of a record read as `seen` carries (1 for a new one). */
export const nextRevision = (seen: StoreRecord | undefined): number => (seen?.revision ?? 0) + 1;

/** What one applied write replaced (`before`: undefined when it created the store) and wrote. */
export interface StoreWrite {
  before: StoreRecord | undefined;
  after: StoreRecord;
}

/**
 * One admin change of a store record, safe against any other at once (optimistic concurrency): read the record,
 * let `change` build the new one from it, and write it only if the record is still what was read (its
 * `revision`); when another write came first, read again and build again from what it left. So two operators'
 * PATCHes of different fields (a pause and a plan change) both hold, and a PUT is applied to the record as it
 * is, not to an older read. `change` may throw (a 404, a tenant mismatch) and runs again on every attempt: it
 * must not write anything the next attempt could not redo (creating queues is idempotent).
 *
 * A record created here (`change` given undefined) is written only if none exists; a lost create reads again.
 */
export const writeStore = async (
  stores: StoreRegistry,
  storeId: string,
  change: (current: StoreRecord | undefined) => Promise<StoreRecord>,
): Promise<StoreWrite> => {
  for (let attempt = 1; attempt <= STORE_WRITE_ATTEMPTS; attempt++) {
    const before = await stores.get(storeId);
    const after = { ...(await change(before)), revision: nextRevision(before) };
    const written = before === undefined ? await stores.create(after) : await stores.replace(after, before);
    if (written) return { before, after };
  }
  throw new ConflictError(
    'concurrent_update',
    `store ${storeId} changed meanwhile, ${STORE_WRITE_ATTEMPTS} times: retry`,
  );
};
