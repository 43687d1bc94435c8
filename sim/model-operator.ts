import { patchStore, redriveDeadLetters, type AdminDeps } from '../lambdas/core/admin.js';
import { ConflictError } from '../lambdas/core/errors.js';
import type { HttpRequest, HttpResponse } from '../lambdas/core/http.js';
import type { StoreRegistry, TokenStore } from '../lambdas/core/ports.js';
import { isConsumable, policyOf, type StoreStatus } from '../lambdas/core/store-model.js';
import { T0 } from './constants.js';
import type { SimContext } from './context.js';
import { campaignBook } from './model-campaigns.js';
import type { RegistryWatch } from './model-registry.js';
import type { Variant } from './protocol-variant.js';
import { Rng } from './rng.js';
import type { Actor } from './scheduler.js';
import type { SimPorts } from './sim-ports.js';
import type { StoreSpec } from './scenario.js';
import type { StoreState } from './world-view.js';

/** A variant that replaces the admin's PATCH, or wraps the Stores table a worker reads (sim/variants-edges.ts). */
export interface OperatorVariant extends Variant {
  patchStore?: (deps: AdminDeps, request: HttpRequest) => Promise<HttpResponse>;
  /** Replaces the admin's redrive of a store's dead letters. */
  redrive?: (deps: AdminDeps, request: HttpRequest) => Promise<HttpResponse>;
  /** `run`: one object per simulated run (a cache keyed on it lives as long as one deployment). */
  workerStores?: (inner: StoreRegistry, run: object) => StoreRegistry;
}

type ActionKind = 'pause' | 'resume' | 'lower' | 'raise' | 'slice' | 'redrive';

/**
 * The status a seed's pause sets: every state that holds the backlog (`isConsumable` false) — paused,
 * maintenance, and disabled, which also refuses new tasks (ingest answers 409; the simulated integrator
 * posts again later). Chosen from the seed, not the operator's stream, so seeds keep their draws.
 */
const HOLDING: readonly StoreStatus[] = ['paused', 'maintenance', 'disabled'];

interface Action {
  /** Kept by the operator's retries of this action (a crash), new for each follow-up (resume, raise). */
  key: number;
  at: number;
  storeId: string;
  kind: ActionKind;
  /** The cap a plan change sets (lower, raise). */
  cap?: number;
  /**
   * A plan change sent as `setOverrides` (that one field, the store's other overrides kept), not as `overrides`
   * (all of them); its follow-up (raise) likewise.
   */
  merge?: boolean;
  /** The messages per slice a `slice` action sets (with `setOverrides`). */
  perSlice?: number;
  /** A redrive: looks for dead letters this many more times (its store is chosen when it fires). */
  tries?: number;
  /** Other operators' actions on the same store, sent at the same moment (their retries go alone). */
  partners?: Action[];
}

/** A record field an action sets: the status, or one of the policy fields the operator changes. */
type Field = 'status' | 'cap' | 'perSlice';
/** The fields an action sets: a plan change sent as `overrides` sets every override field, one as `setOverrides` its own. */
const fieldsOf = (action: Action): Field[] => {
  if (action.kind === 'pause' || action.kind === 'resume') return ['status'];
  if (action.kind === 'slice') return ['perSlice'];
  if (action.kind === 'lower' || action.kind === 'raise') return action.merge ? ['cap'] : ['cap', 'perSlice'];
  return [];
};

/** What a worker saw in the store record it last read: before its acquire, or a slice's re-read. */
interface Read {
  storeId: string;
  active: boolean;
  cap: number;
  perSlice: number;
}

/** A store's record as one write left it (true time; the record the run starts with at -Infinity). */
interface Written {
  at: number;
  active: boolean;
  cap: number;
}

const notSimulated = () => Promise.reject(new Error('not simulated'));
/** PATCH never touches tokens. */
const NO_TOKENS: TokenStore = {
  put: notSimulated,
  get: notSimulated,
  listByTenant: notSimulated,
  amend: notSimulated,
  tenantsPage: notSimulated,
};

/**
 * Operator actions through the real admin use case (`patchStore`, lambdas/core/admin.ts), at times drawn
 * per seed on a stream of their own (so seeds without them keep their interleavings): a store paused (or put
 * in maintenance, or disabled: `HOLDING`) and resumed; a plan change that lowers a store's concurrency cap, raised back later (a cap lowered to 1
 * stays: going from one consumer to several mid-lease is not modelled, as for campaigns); and a redrive of
 * the store with the most dead letters (the real `redriveDeadLetters`; the move: sim/model-redrive.ts). One action
 * at a time, each retried until it is acknowledged (a 200) — except that on some seeds a second operator pauses
 * the store whose cap is lowered at the same moment: two PATCHes of one record at once, each of which reads the
 * whole record and writes it back. On some seeds (a stream of their own) the plan change names its one field
 * (`setOverrides`) instead of sending all the overrides, and on some of those a third operator lowers the same
 * store's messages per slice at that moment, also with `setOverrides`: two merges of one record's overrides at
 * once. Invariant 14 (`OPERATOR_INVARIANT`): an acknowledged change holds — once a PATCH is acknowledged, each
 * field it set keeps its value until another PATCH of that field, so none of them undoes another
 * (lambdas/core/store-writes.ts; broken variants `store-write-unconditional`, `set-overrides-merged-once`).
 *
 * It also watches the Stores table: what each worker read of its store (status and cap), which is the
 * policy the real worker slices with — the checks hold each lease to that, not to the record as it is now.
 */
export class Operator implements RegistryWatch {
  private readonly pending: Action[] = [];
  private readonly reads = new Map<number, Read>();
  /** Each store's status and own cap after each write of its record (true time), from the run's start. */
  private readonly history = new Map<string, Written[]>();
  /** Actions under way (sent, or crashed and waiting for their retry), by key. */
  private readonly unsettled = new Map<number, Action>();
  /** The value of each store's field as the operator's last acknowledged PATCH of it set it. */
  private readonly acknowledged = new Map<
    string,
    { storeId: string; field: Field; value: string | number }
  >();
  private running = 0;
  private keys = 0;
  private readonly rng: Rng;

  constructor(
    private readonly ctx: SimContext,
    private readonly ports: SimPorts,
    private readonly stores: ReadonlyMap<string, StoreState>,
  ) {
    const rng = new Rng(ctx.scenario.seed ^ 0x0be7a);
    const specs = ctx.scenario.stores;
    if (rng.chance(0.5)) {
      const store = rng.pick(specs);
      this.pending.push({
        key: ++this.keys,
        at: T0 + rng.int(2_000, 60_000),
        storeId: store.storeId,
        kind: 'pause',
      });
    }
    // The plan change goes to the busiest store that has several consumers: where a cap can be exceeded.
    const several = specs
      .filter((s) => s.policy.maxConcurrentConsumers >= 2)
      .sort((a, b) => b.tasks * b.policy.maxMessagesPerSlice - a.tasks * a.policy.maxMessagesPerSlice);
    if (several.length > 0 && rng.chance(0.8)) {
      const store = several[0] as StoreSpec;
      const cap = rng.int(1, store.policy.maxConcurrentConsumers - 1);
      this.pending.push({
        key: ++this.keys,
        at: T0 + rng.int(1_000, 30_000),
        storeId: store.storeId,
        kind: 'lower',
        cap,
      });
    }
    this.rng = rng;
    // A redrive, on a stream of its own (the draws above keep their values): of whichever store has the most
    // dead letters then; tried up to three times, 20–40 s apart, while no store has any.
    const redrives = new Rng(ctx.scenario.seed ^ 0x7ed71);
    if (redrives.chance(0.6))
      this.pending.push({
        key: ++this.keys,
        at: T0 + redrives.int(15_000, 60_000),
        storeId: '',
        kind: 'redrive',
        tries: 3,
      });
    // Two operators at once, on a stream of its own: a pause of the store whose cap is lowered, sent with it.
    const lower = this.pending.find((action) => action.kind === 'lower');
    if (lower && new Rng(ctx.scenario.seed ^ 0xc0c0a).chance(0.4))
      lower.partners = [{ key: ++this.keys, at: lower.at, storeId: lower.storeId, kind: 'pause' }];
    // `setOverrides`, on a stream of its own: the plan change names its field, and another operator lowers the
    // store's messages per slice at that moment (only lower: a slice never takes more than its plan allows).
    const merges = new Rng(ctx.scenario.seed ^ 0x5e70e);
    if (lower && merges.chance(0.5)) {
      lower.merge = true;
      const own = (specs.find((s) => s.storeId === lower.storeId) as StoreSpec).policy.maxMessagesPerSlice;
      if (own >= 2 && merges.chance(0.6))
        lower.partners = [
          ...(lower.partners ?? []),
          {
            key: ++this.keys,
            at: lower.at,
            storeId: lower.storeId,
            kind: 'slice',
            perSlice: merges.int(1, own - 1),
          },
        ];
    }
  }

  /* ---------------------------------------------------------------- what the checks read */

  read(actor: Actor, state: StoreState): void {
    if (actor.kind !== 'worker') return;
    this.reads.set(actor.id, {
      storeId: state.spec.storeId,
      active: isConsumable(state.record.status),
      cap: policyOf(state.record).maxConcurrentConsumers,
      perSlice: policyOf(state.record).maxMessagesPerSlice,
    });
  }

  /** The records the run starts with (called once the stores are added). */
  started(): void {
    for (const state of this.stores.values())
      this.history.set(state.spec.storeId, [Operator.written(-Infinity, state)]);
  }

  private static written(at: number, state: StoreState): Written {
    return {
      at,
      active: isConsumable(state.record.status),
      cap: policyOf(state.record).maxConcurrentConsumers,
    };
  }

  /** When the store's record last stopped being consumable (true time); undefined while it is consumable. */
  pausedSince(storeId: string): number | undefined {
    const history = this.history.get(storeId) ?? [];
    let since: number | undefined;
    for (let i = history.length - 1; i >= 0 && !(history[i] as Written).active; i--)
      since = (history[i] as Written).at;
    return since;
  }

  /** The own caps the store's record held at some instant after `from` (true time), up to now. */
  capsSince(storeId: string, from: number): number[] {
    const history = this.history.get(storeId) ?? [];
    const caps: number[] = [];
    for (const [i, entry] of history.entries()) {
      const next = history[i + 1];
      if (next === undefined || next.at > from) caps.push(entry.cap);
    }
    return caps;
  }

  written(state: StoreState): void {
    this.history.get(state.spec.storeId)?.push(Operator.written(this.ctx.now, state));
    this.ctx.sched.log(
      `operator: ${state.spec.storeId} is now ${state.record.status}, cap ${policyOf(state.record).maxConcurrentConsumers}, ${policyOf(state.record).maxMessagesPerSlice} a slice`,
    );
    // A write may undo an acknowledged change before any acknowledgement follows (a crashed PATCH's write).
    this.checkAcknowledged();
  }

  /** The Stores table as `actor` reads it (a broken variant may wrap a worker's). */
  registry(actor: Actor, port: StoreRegistry): StoreRegistry {
    const wrap = (this.ctx.variant as OperatorVariant | undefined)?.workerStores;
    return wrap && actor.kind === 'worker' ? wrap(port, this) : port;
  }

  readOf(actorId: number, storeId: string): Read | undefined {
    const read = this.reads.get(actorId);
    return read?.storeId === storeId ? read : undefined;
  }

  /* ---------------------------------------------------------------- the operator's script */

  nextAt(): number | undefined {
    if (this.running > 0) return undefined;
    let min: number | undefined;
    for (const action of this.pending) if (min === undefined || action.at < min) min = action.at;
    return min;
  }

  fire(): void {
    if (this.running > 0 || this.pending.length === 0) return;
    this.pending.sort((a, b) => a.at - b.at);
    const next = this.pending[0] as Action;
    if (next.at > this.ctx.now) return;
    this.pending.shift();
    if (next.kind === 'redrive' && next.storeId === '') {
      const storeId = this.mostDeadLetters();
      if (storeId === undefined) {
        if ((next.tries ?? 1) > 1)
          this.pending.push({
            ...next,
            at: this.ctx.now + this.rng.int(20_000, 40_000),
            tries: (next.tries ?? 1) - 1,
          });
        return;
      }
      next.storeId = storeId;
    }
    this.spawn(next);
    for (const partner of next.partners ?? []) this.spawn(partner);
  }

  private mostDeadLetters(): string | undefined {
    let best: StoreState | undefined;
    for (const state of this.stores.values())
      if (state.dlq.messages.size > (best?.dlq.messages.size ?? 0)) best = state;
    return best?.spec.storeId;
  }

  /**
   * Invariant 14: `action` was acknowledged. Each field it set now holds its value (unless the same field has
   * another action under way), and so does every field an earlier acknowledged PATCH set and nothing has set
   * since (checked again at every write of the table).
   */
  private settled(action: Action): void {
    this.unsettled.delete(action.key);
    for (const field of fieldsOf(action))
      this.acknowledged.set(`${action.storeId}|${field}`, {
        storeId: action.storeId,
        field,
        value: this.valueOf(action, field),
      });
    this.checkAcknowledged();
  }

  /** What `field` holds once `action` is applied. */
  private valueOf(action: Action, field: Field): string | number {
    if (field === 'status') return this.bodyOf(action)['status'] as string;
    if (field === 'cap') return action.cap ?? 0;
    // A `slice` action's own value; a plan change sent with all the overrides puts back the spec's.
    return action.perSlice ?? (this.stores.get(action.storeId) as StoreState).spec.policy.maxMessagesPerSlice;
  }

  /** Invariant 14 now: every acknowledged field holds, but for fields with a PATCH under way. */
  private checkAcknowledged(): void {
    const busy = new Set(
      [...this.unsettled.values()].flatMap((a) => fieldsOf(a).map((f) => `${a.storeId}|${f}`)),
    );
    for (const [key, { storeId, field: f, value }] of this.acknowledged) {
      if (busy.has(key)) continue;
      const record = (this.stores.get(storeId) as StoreState).record;
      const policy = policyOf(record);
      const holds =
        f === 'status'
          ? record.status
          : f === 'cap'
            ? policy.maxConcurrentConsumers
            : policy.maxMessagesPerSlice;
      if (holds !== value)
        this.ctx.checks.changeLost(
          `the operator's acknowledged ${f} ${value} of ${storeId} was undone: the record has ${holds}`,
        );
    }
  }

  private bodyOf(action: Action): Record<string, unknown> {
    const state = this.stores.get(action.storeId) as StoreState;
    if (action.kind === 'redrive') return {};
    if (action.kind === 'pause') return { status: HOLDING[this.ctx.scenario.seed % HOLDING.length] };
    if (action.kind === 'resume') return { status: 'active' };
    if (action.kind === 'slice') return { setOverrides: { maxMessagesPerSlice: action.perSlice } };
    if (action.merge) return { setOverrides: { maxConcurrentConsumers: action.cap } };
    return { overrides: { ...state.spec.overrides, maxConcurrentConsumers: action.cap } };
  }

  private spawn(action: Action): void {
    const { ctx, rng } = this;
    this.running++;
    this.unsettled.set(action.key, action);
    const actor = ctx.sched.newActor('operator', `operator:${action.kind}:${action.storeId}`, ctx.skew());
    const deps: AdminDeps = {
      ...this.ports.common(actor),
      stores: this.ports.stores(actor),
      queues: this.ports.queueAdmin(actor),
      tokens: NO_TOKENS,
      campaigns: campaignBook(ctx.scenario.campaigns),
    };
    const redrive = action.kind === 'redrive';
    const request: HttpRequest = {
      method: redrive ? 'POST' : 'PATCH',
      resource: redrive ? '/v1/admin/stores/{storeId}/dead-letters/redrive' : '/v1/admin/stores/{storeId}',
      pathParameters: { storeId: action.storeId },
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(this.bodyOf(action)),
      caller: 'sim-operator',
      requestId: `op-${actor.id}`,
    };
    let over = false;
    const finish = (acknowledged: boolean, why: string) => {
      if (over) return;
      over = true;
      this.running--;
      ctx.sched.log(`${actor.name} ${why}`);
      const { partners: _sent, ...alone } = action;
      if (!acknowledged) {
        // The operator tries again (the same PATCH), until it is acknowledged.
        this.pending.push({ ...alone, at: ctx.now + rng.int(1_000, 3_000) });
        return;
      }
      ctx.stats.operatorActions++;
      if (action.merge || action.kind === 'slice') ctx.stats.overrideMerges++;
      this.settled(action);
      const own = (this.stores.get(action.storeId) as StoreState).spec.policy.maxConcurrentConsumers;
      if (action.kind === 'pause')
        this.pending.push({
          ...alone,
          key: ++this.keys,
          kind: 'resume',
          at: ctx.now + rng.int(1_000, 60_000),
        });
      if (action.kind === 'lower' && (action.cap ?? 1) >= 2)
        this.pending.push({
          ...alone,
          key: ++this.keys,
          kind: 'raise',
          cap: own,
          at: ctx.now + rng.int(2_000, 60_000),
        });
    };
    actor.onCrash = () => finish(false, 'crashed: the operator retries');
    const variant = ctx.variant as OperatorVariant | undefined;
    const call = redrive ? (variant?.redrive ?? redriveDeadLetters) : (variant?.patchStore ?? patchStore);
    call(deps, request)
      .then(
        (response) => finish(response.status === (redrive ? 202 : 200), `answered ${response.status}`),
        (error: unknown) =>
          // A redrive refused because a move runs: an earlier try, whose answer was lost, started it.
          redrive && error instanceof ConflictError
            ? finish(true, 'answered 409: a move is running')
            : finish(false, `failed ${String(error)}`),
      )
      .finally(() => {
        if (!actor.crashed) actor.finished = true;
        ctx.sched.notify();
      });
  }
}
