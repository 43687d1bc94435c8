import { RecordingTelemetry } from '../../../lambdas/adapters/recording-telemetry.js';
import type { DeliveryOutcome, ReceivedMessage, TaskQueues } from '../../../lambdas/core/ports.js';
import type { Policy } from '../../../lambdas/core/plans.js';
import type { Lease, SliceDeps } from '../../../lambdas/core/slice.js';
import { MemoryDeliveryLog } from '../../support/memory-delivery-log.js';
import { MemoryDispatchState } from '../../support/memory-dispatch-state.js';
import { SLICE_T0, sliceStore, work } from './slice-fixtures.js';

/**
 * A slice's world for the marketplace's own limits (the adaptive rate, the throttle scope): a pro store `s1` on the
 * in-memory dispatch state, a queue filled by hand, a marketplace answering by call number, a virtual clock.
 */
export const T0 = SLICE_T0;
export const store = sliceStore({ plan: 'pro' });
export const policy = (consumers: number): Policy => ({
  maxConcurrentConsumers: consumers,
  maxMessagesPerSlice: 8,
  maxSliceSeconds: 20,
  ratePerSecond: 20,
  maxAttempts: 5,
  priority: 'normal',
  throttleScope: 'store',
});

export const setup = (answer: (call: number) => DeliveryOutcome) => {
  const w = { now: T0, calls: [] as number[], queue: [] as ReceivedMessage[] };
  const fill = (from: number, count: number) => {
    for (let i = from; i < from + count; i++) {
      w.queue.push({
        messageId: `m${i}`,
        receiptHandle: `r${i}`,
        body: work(i),
        receiveCount: 1,
        sentAt: T0,
      });
    }
  };
  const tasks = {
    receive: async (_url: string, { maxMessages }: { maxMessages: number }) => w.queue.splice(0, maxMessages),
    deleteBatch: async () => undefined,
    changeVisibility: async () => undefined,
    resend: async () => undefined,
    deadLetter: async () => undefined,
  } as unknown as TaskQueues;
  const dispatch = new MemoryDispatchState();
  const deps: SliceDeps = {
    dispatch,
    tasks,
    attention: { publish: async () => undefined },
    marketplace: {
      deliver: async () => {
        w.calls.push(w.now);
        return answer(w.calls.length);
      },
    },
    deliveries: new MemoryDeliveryLog(),
    clock: {
      now: () => w.now,
      sleep: async (ms) => {
        w.now += ms;
      },
    },
    ids: { next: () => `id-${w.calls.length}-${w.now}` },
    telemetry: new RecordingTelemetry(),
    random: () => 0.5,
    settings: { emptyPollSeconds: 1, marketplaceTimeoutMs: 5_000 },
  };
  return { w, deps, dispatch, fill };
};

export const leaseOf = async (
  dispatch: MemoryDispatchState,
  slotId: string,
  now: number,
  max: number,
): Promise<Lease> => {
  await dispatch.issueSlot('s1', slotId, now, max, now);
  const acquired = await dispatch.acquire('s1', slotId, { now, expiresAt: now + 35_000, max });
  if (!acquired.ok) throw new Error('no lease');
  const slot = acquired.item.slots[slotId];
  return {
    slotId,
    fence: slot?.s === 'l' ? slot.f : 0,
    seenSeq: acquired.item.enqSeq,
    startedAt: now,
    expiresAt: now + 35_000,
    nextCallAt: now,
    slotsAtStart: Object.keys(acquired.item.slots).length,
    ...(acquired.item.rate === undefined ? {} : { rate: acquired.item.rate }),
  };
};

export const gaps = (times: number[]): number[] => times.slice(1).map((t, i) => t - (times[i] as number));
