import type { WorkMessage } from '../../../lambdas/core/messages.js';
import type { DeliveryLog, ReceivedMessage } from '../../../lambdas/core/ports.js';
import { T0 } from './fixtures.js';

/** store-1's task evt-1, an inventory update accepted at T0, for deliverTask's unit tests; `patch` adds fields. */
export const taskWork = (patch: Partial<WorkMessage> = {}): WorkMessage => ({
  v: 1,
  storeId: 'store-1',
  eventId: 'evt-1',
  type: 'inventory.update',
  payload: { sku: 'A', quantity: 1 },
  acceptedAt: T0,
  ...patch,
});

/** The first receive of a task whose body is `body` (the message text), sent at T0. */
export const receivedTask = (body: string, messageId = 'm1'): ReceivedMessage => ({
  messageId,
  receiptHandle: `rh-${messageId}`,
  body,
  receiveCount: 1,
  sentAt: T0,
});

/** Another batch's attempt at store-1's task, claimed at T0 until `until`. */
export const claimElsewhere = (deliveries: DeliveryLog, until: number, eventId = 'evt-1') =>
  deliveries.claim('store-1', eventId, { holder: 'other', now: T0, until, messageId: 'x' });
