import { marshall } from '@aws-sdk/util-dynamodb';
import { describe, expect, it } from 'vitest';
import { conditional } from '../../../lambdas/adapters/dynamo-conditional.js';
import { conditionFailed } from '../support/fixtures.js';

describe('conditional', () => {
  it('returns the write result when the condition holds', async () => {
    await expect(conditional(async () => 'written')).resolves.toEqual({ ok: true, value: 'written' });
  });

  it('returns the unmarshalled old item when the condition is lost', async () => {
    const write = async () => {
      throw conditionFailed({ storeId: 's', slots: { a: { s: 'q', at: 5 } } });
    };
    await expect(conditional(write)).resolves.toEqual({
      ok: false,
      current: { storeId: 's', slots: { a: { s: 'q', at: 5 } } },
    });
  });

  it('recognises the exception by name when it comes from another copy of the SDK', async () => {
    const foreign = Object.assign(new Error('The conditional request failed'), {
      name: 'ConditionalCheckFailedException',
      Item: marshall({ storeId: 's' }),
    });
    const write = async () => {
      throw foreign;
    };
    await expect(conditional(write)).resolves.toEqual({ ok: false, current: { storeId: 's' } });
  });

  it('rethrows any other error', async () => {
    const write = async () => {
      throw new Error('ThrottlingException');
    };
    await expect(conditional(write)).rejects.toThrow('ThrottlingException');
  });
});
