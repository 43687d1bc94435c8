import { vi } from 'vitest';
import { RecordingTelemetry } from '../../../lambdas/adapters/recording-telemetry.js';
import type { DispatchItem } from '../../../lambdas/core/dispatch-model.js';
import type {
  Conditional,
  DeliveryOutcome,
  DispatchState,
  ReceivedMessage,
  TaskQueues,
} from '../../../lambdas/core/ports.js';
import type { Policy } from '../../../lambdas/core/plans.js';
import type { Lease, SliceDeps } from '../../../lambdas/core/slice.js';
import { MemoryDeliveryLog } from '../../support/memory-delivery-log.js';
import { SLICE_T0, sliceLease, slicePolicy, sliceStore, work } from './slice-fixtures.js';

/** A slice's world for runSlice's unit tests: plain-object fakes recording what the slice did, a pinned clock. */
export const T0 = SLICE_T0;
export const store = sliceStore();
export const policy = (p: Partial<Policy> = {}): Policy => ({ ...slicePolicy, ...p });
export { work };

export const item = (patch: Partial<DispatchItem> = {}): DispatchItem => ({
  storeId: 's1',
  enqSeq: 7,
  fence: 1,
  slots: { a: { s: 'l', at: T0 + 35_000, f: 1 } },
  ...patch,
});

export interface World {
  now: number;
  queue: ReceivedMessage[];
  deleted: string[];
  visibility: { receiptHandle: string; seconds: number }[];
  calls: string[];
  events: string[];
  receives: number[];
  resent: { receiptHandle: string; delay: number }[];
  tat: number | undefined;
}

export const setup = (
  opts: { messages?: number; outcome?: (eventId: string) => DeliveryOutcome; callMs?: number } = {},
) => {
  const w: World = {
    now: T0,
    queue: [],
    deleted: [],
    visibility: [],
    calls: [],
    events: [],
    receives: [],
    resent: [],
    tat: undefined,
  };
  for (let i = 0; i < (opts.messages ?? 0); i++) {
    w.queue.push({
      messageId: `m${i}`,
      receiptHandle: `r${i}`,
      body: work(i),
      receiveCount: 1,
      sentAt: T0 - 1000 + i,
    });
  }
  const tasks: TaskQueues = {
    send: vi.fn(),
    sendBatch: vi.fn(),
    receive: vi.fn(async (_url, { maxMessages }) => {
      w.receives.push(maxMessages);
      return w.queue.splice(0, maxMessages);
    }),
    deleteBatch: vi.fn(async (_url, handles: string[]) => {
      w.deleted.push(...handles);
    }),
    changeVisibility: vi.fn(async (_url, entries: { receiptHandle: string; seconds: number }[]) => {
      w.events.push('visibility');
      w.visibility.push(...entries);
    }),
    deadLetter: vi.fn(async () => undefined),
    resend: vi.fn(async (_url, messages: { receiptHandle: string }[], delay: number) => {
      w.events.push('resend');
      w.resent.push(...messages.map((m) => ({ receiptHandle: m.receiptHandle, delay })));
    }),
  };
  const ok = (value: DispatchItem): Conditional => ({ ok: true, item: value });
  const dispatch = {
    markIdle: vi.fn(async () => ok(item({ slots: {} }))),
    release: vi.fn(async () => ok(item({ slots: {} }))),
    deferWake: vi.fn(async () => {
      w.events.push('deferWake');
    }),
    // Copies re-sent count as an enqueue (a lease that let the store go idle meanwhile is undone).
    recordEnqueued: vi.fn(async () => {
      w.events.push('recordEnqueued');
      return item();
    }),
    issueSlot: vi.fn(async () => ok(item())),
    // The store's shared rate schedule (GCRA), as the DynamoDB adapter keeps it.
    restartTat: vi.fn(async (_id: string, now: number, interval: number) => {
      if (w.tat !== undefined && w.tat > now) return undefined;
      w.tat = now + interval;
      return { tat: w.tat };
    }),
    advanceTat: vi.fn(async (_id: string, interval: number) => {
      w.tat = (w.tat ?? 0) + interval;
      return { tat: w.tat };
    }),
    holdTat: vi.fn(async (_id: string, until: number) => {
      w.events.push('holdTat');
      if (w.tat === undefined || w.tat < until) w.tat = until;
    }),
  } as unknown as DispatchState &
    Record<
      'markIdle' | 'release' | 'deferWake' | 'issueSlot' | 'advanceTat' | 'restartTat' | 'holdTat',
      ReturnType<typeof vi.fn>
    >;
  const deps: SliceDeps = {
    dispatch,
    tasks,
    attention: { publish: vi.fn(async () => undefined) },
    marketplace: {
      deliver: vi.fn(async (req) => {
        w.calls.push(req.body.eventId);
        w.now += opts.callMs ?? 0;
        return opts.outcome?.(req.body.eventId) ?? ({ kind: 'ok', status: 200 } as DeliveryOutcome);
      }),
    },
    deliveries: new MemoryDeliveryLog(),
    clock: {
      now: () => w.now,
      sleep: async (ms) => {
        w.now += ms;
      },
    },
    ids: { next: () => 'new-slot' },
    telemetry: new RecordingTelemetry(),
    random: () => 0.5,
    settings: { emptyPollSeconds: 1, marketplaceTimeoutMs: 5_000 },
  };
  return { w, deps, dispatch, tasks };
};

export const lease = (patch: Partial<Lease> = {}): Lease => ({ ...sliceLease, ...patch });
