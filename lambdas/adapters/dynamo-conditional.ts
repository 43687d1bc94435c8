import { isDeepStrictEqual } from 'node:util';
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

/**
 * Whether a refused conditional write had in fact applied: the SDK retries a write whose answer it lost (a
 * timeout), and the retry's condition then fails on the write's own result. Only then (or if another caller
 * wrote the very same value, which is as good) is what the refusal found exactly what was written, revision
 * and timestamps included.
 */
export const sameAsWritten = (found: unknown, written: unknown): boolean =>
  found !== undefined && isDeepStrictEqual(found, JSON.parse(JSON.stringify(written)));
