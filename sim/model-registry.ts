import type { StoreRegistry } from '../lambdas/core/ports.js';
import type { SimContext } from './context.js';
import type { Actor } from './scheduler.js';
import type { StoreState } from './world-view.js';

/** What the operator model (sim/model-operator.ts) hears of the Stores table, as each call applies. */
export interface RegistryWatch {
  read(actor: Actor, state: StoreState): void;
  written(state: StoreState): void;
}

/** The Stores table as the core reads it (get, scan) and the admin writes it (put), every call one scheduled operation. */
export const registryFor = (
  ctx: SimContext,
  stores: ReadonlyMap<string, StoreState>,
  actor: Actor,
  watch?: RegistryWatch,
): StoreRegistry => {
  const all = () => [...stores.values()].map((s) => ({ ...s.record }));
  const port: StoreRegistry = {
    get: (storeId) =>
      ctx.sched.call(actor, 'stores.get', ctx.awsLatency(actor, 'stores.get'), () => {
        const state = stores.get(storeId);
        if (state) watch?.read(actor, state);
        return state ? { ...state.record } : undefined;
      }),
    scan: (cursor, limit) =>
      ctx.sched.call(actor, 'stores.scan', ctx.awsLatency(actor, 'stores.scan'), () => {
        const start = cursor ? Number(cursor) : 0;
        const page = all().slice(start, start + limit);
        const next = start + limit < stores.size ? { cursor: String(start + limit) } : {};
        return { stores: page, ...next };
      }),
    create: () => Promise.reject(new Error('not simulated')),
    // The admin's PATCH (sim/model-operator.ts): a whole-record put on the revision it read, as the DynamoDB
    // adapter does (a broken variant drops the condition: sim/variants-edges.ts).
    replace: (record, seen) =>
      ctx.sched.call(actor, 'stores.replace', ctx.awsLatency(actor, 'stores.replace'), () => {
        const state = stores.get(record.storeId);
        if (!state) throw new Error(`no such store ${record.storeId}`);
        if (state.record.revision !== seen.revision) {
          ctx.stats.storeWriteConflicts++;
          return false;
        }
        state.record = { ...record };
        watch?.written(state);
        return true;
      }),
  };
  return ctx.variant?.stores ? ctx.variant.stores(port, actor.kind) : port;
};
