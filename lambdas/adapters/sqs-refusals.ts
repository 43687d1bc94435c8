import { PayloadTooLargeError, ValidationError } from '../core/errors.js';
import type { SendFailure } from '../core/ports.js';

/** SQS's own limit on one message, body and attributes together. */
export const SQS_MAX_MESSAGE_BYTES = 256 * 1024;

/**
 * Whether SQS (or the emulator) refused a message for what it holds rather than for being unavailable.
 * Read from the error code, which SQS reports with or without its `AWS.SimpleQueueService.` prefix; the
 * per-message size refusal shares `InvalidParameterValue` with other mistakes, so only there the text
 * decides.
 */
export const refusalOf = (code: string | undefined, message: string | undefined): SendFailure['refused'] => {
  const name = code ?? '';
  if (name.endsWith('InvalidMessageContents')) return 'content';
  if (name.endsWith('BatchRequestTooLong')) return 'too_large';
  if (name.endsWith('InvalidParameterValue') && /shorter than|too long/i.test(message ?? ''))
    return 'too_large';
  return undefined;
};

/** The error ingest answers with when the queue refused the message itself: a 4xx, never a retryable 503. */
export const refusalError = (refused: NonNullable<SendFailure['refused']>): Error =>
  refused === 'too_large'
    ? new PayloadTooLargeError(SQS_MAX_MESSAGE_BYTES, 'task, once encoded for the store queue,')
    : new ValidationError('body: the store queue refused a character of this task');
