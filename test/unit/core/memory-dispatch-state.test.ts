import { describe, expect, it } from 'vitest';
import { backfillExpected, backfillScenario, dispatchScenarios } from '../../support/dispatch-scenarios.js';
import { MemoryDispatchState } from '../../support/memory-dispatch-state.js';

describe('MemoryDispatchState keeps the protocol conditions', () => {
  it.each(dispatchScenarios)('%s', async (_name, scenario, expected) => {
    expect(await scenario(new MemoryDispatchState(), 'store-1')).toEqual(expected);
  });

  it('index backfill: lists the items marked active without headSentAt, page by page, and indexes them conditionally', async () => {
    const state = new MemoryDispatchState();
    const legacy = async (storeId: string) => {
      await state.recordEnqueued(storeId, 1, 0);
      delete state.items.get(storeId)?.headSentAt;
    };
    expect(await backfillScenario(state, legacy, 'b')).toEqual(backfillExpected('b'));
  });
});
