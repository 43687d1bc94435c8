import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';

/**
 * Runs a conditional write. A lost condition comes back as `{ ok: false, current }` with the item as it
 * stood (ReturnValuesOnConditionCheckFailure: ALL_OLD), so callers decide without another read.
 * Every other error is rethrown.
 */
export const conditional = async <T>(
  write: () => Promise<T>,
): Promise<{ ok: true; value: T } | { ok: false; current: Record<string, unknown> | undefined }> => {
  try {
    return { ok: true, value: await write() };
  } catch (error) {
    if (
      error instanceof ConditionalCheckFailedException ||
      (error as { name?: string }).name === 'ConditionalCheckFailedException'
    ) {
      const item = (error as ConditionalCheckFailedException).Item;
      return { ok: false, current: item ? unmarshall(item) : undefined };
    }
    throw error;
  }
};
