import { handleAttention } from '../lambdas/core/attention.js';
import type { TaskQueues } from '../lambdas/core/ports.js';
import { override, type Variant } from './protocol-variant.js';

/**
 * Broken variants of the confirm queue (issue #11): a slice whose short polls come back empty hands its slot to
 * the confirm queue, and the confirm slice makes the empty decision with its own long polls.
 */
export const CONFIRM_VARIANTS: Variant[] = [
  {
    name: 'confirm-ping-pong',
    breaks: 5,
    description:
      'a confirm slice runs as a main slice: its short polls come back empty and it hands the slot on again, so no slice ever makes the empty decision — the store circles through the confirm queue, starting slice after slice while other stores wait their turn, and never goes idle',
    handleAttention: (deps, message) =>
      handleAttention(deps, message.reason === 'confirm' ? { ...message, reason: 'requeue' } : message),
  },
  {
    name: 'confirm-trusts-handoff',
    breaks: 2,
    description:
      "a confirm slice takes its main slice's empty short polls for its own answer (its long polls answer empty without asking SQS): tasks enqueued between that look and the confirm slice's lease are left in a store marked idle",
    handleAttention: (deps, message) => {
      if (message.reason !== 'confirm') return handleAttention(deps, message);
      let trusted = 2;
      const tasks: TaskQueues = override(deps.tasks, 'receive', async (url, opts) =>
        opts.waitSeconds > 0 && trusted-- > 0 ? [] : deps.tasks.receive(url, opts),
      );
      return handleAttention({ ...deps, tasks }, message);
    },
  },
];
