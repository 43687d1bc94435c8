import { describe, expect, it } from 'vitest';
import { dispatchScenarios } from '../../support/dispatch-scenarios.js';
import { MemoryDispatchState } from '../../support/memory-dispatch-state.js';

describe('MemoryDispatchState keeps the protocol conditions', () => {
  it.each(dispatchScenarios)('%s', async (_name, scenario, expected) => {
    expect(await scenario(new MemoryDispatchState(), 'store-1')).toEqual(expected);
  });
});
