import { z } from 'zod';
import { STORE_PRIORITIES, type StorePriority } from './plans.js';
import { sqsSafeJson } from './sqs-text.js';
import { TASK_PRIORITIES, TASK_TYPES, type TaskType } from './task-schemas.js';

/** Why an attention was published: kept in the message for logs and metrics. */
export const ATTENTION_REASONS = [
  'ingest',
  'requeue',
  'fanout',
  'reclaim',
  'resend',
  'repair',
  'resume',
  'redrive',
  'sweep',
  /** A slice's short polls came back empty: its slot's empty decision, on the confirm queue. */
  'confirm',
  /**
   * The slot's next slice makes its empty decision itself (the long poll) rather than hand it to the confirm queue:
   * its last slice's empty check caught tasks as they arrived (a trickle, whose next task would wait out the confirm
   * queue's batching window), or found only messages hidden for a retry (deferred), or a confirm slice was told of
   * tasks its long poll did not see.
   */
  'recheck',
] as const;
export type AttentionReason = (typeof ATTENTION_REASONS)[number];

/**
 * Attentions whose slice makes its empty decision itself, even where a confirm queue is deployed: `recheck`, and
 * the reconciler's repairs — a slot it re-announces may be one whose confirm attention is late, and a slice that
 * handed off again would add a confirm attention per reconciler run while the confirm queue lags.
 */
export const DECIDES_EMPTY: readonly AttentionReason[] = ['recheck', 'resend', 'reclaim', 'repair', 'sweep'];

/** The tiny signal on the shared attention queue: "store X has a slot waiting for a worker". */
export const AttentionMessageSchema = z.object({
  v: z.literal(1),
  storeId: z.string().min(1),
  slotId: z.string().min(1),
  reason: z.enum(ATTENTION_REASONS),
  issuedAt: z.number().int(),
  correlationId: z.string().optional(),
  /**
   * The store's level when it was published: which level queue it went to (absent on attentions published
   * before store priority existed, which all travel on the `normal` queue).
   */
  priority: z.enum(STORE_PRIORITIES).optional(),
  /**
   * The slot's due time this attention announces (the `at` its publisher wrote: issue, requeue, reclaim, or
   * the reconciler's resend of it). An attention that arrives while its slot is queued for a later time is
   * surplus: the write that moved the slot published its own (`attention.ts`). Absent on attentions of an
   * older publisher, which are waited out as before.
   */
  dueAt: z.number().optional(),
});
export type AttentionMessage = z.infer<typeof AttentionMessageSchema>;

/** The level queue an attention travels on; one without a level (an older publisher's) is `normal`. */
export const attentionLevelOf = (message: AttentionMessage): StorePriority => message.priority ?? 'normal';

/**
 * The queue an attention travels on: a `confirm` attention (an empty look handed on) on the confirm queue where one
 * is deployed, every other on its level's queue. The one routing rule the publisher, the simulation and the
 * calibration harness share.
 */
export const attentionRoute = (
  message: AttentionMessage,
  confirmQueue: boolean,
): StorePriority | 'confirm' =>
  message.reason === 'confirm' && confirmQueue ? 'confirm' : attentionLevelOf(message);

/** What ingest puts on a store's work queue: the task as accepted plus where it came from. */
export const WorkMessageSchema = z.object({
  v: z.literal(1),
  storeId: z.string().min(1),
  eventId: z.string().min(1),
  type: z.enum(TASK_TYPES as [TaskType, ...TaskType[]]),
  payload: z.record(z.string(), z.unknown()),
  entityId: z.string().optional(),
  version: z.number().int().min(0).optional(),
  /** The task's priority as resolved at ingest (its own, else its type's default): which queue it went to. */
  priority: z.enum(TASK_PRIORITIES).optional(),
  acceptedAt: z.number().int(),
  correlationId: z.string().optional(),
  /** The X-Ray trace id of the request that submitted it (core/trace-header.ts): one trace, ingest to marketplace. */
  traceId: z.string().max(64).optional(),
});
export type WorkMessage = z.infer<typeof WorkMessageSchema>;

/** The body of a work message as every copy of it travels: JSON that SQS and the emulator both accept. */
export const encodeWorkMessage = (message: WorkMessage): string => sqsSafeJson(message);
