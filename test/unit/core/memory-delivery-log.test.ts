import { describe, expect, it } from 'vitest';
import { deliveryScenarios } from '../../support/delivery-scenarios.js';
import { MemoryDeliveryLog } from '../../support/memory-delivery-log.js';

describe('MemoryDeliveryLog keeps the effect-once conditions', () => {
  it.each(deliveryScenarios)('%s', async (_name, scenario, expected) => {
    expect(await scenario(new MemoryDeliveryLog(), 'store-1')).toEqual(expected);
  });
});
