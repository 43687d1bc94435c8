import type { TaskQueues } from '../lambdas/core/ports.js';
import type { Variant } from './protocol-variant.js';

/** A store's high-priority queue in the simulation (model-sqs.ts names it so). */
const isHighQueue = (url: string): boolean => url.startsWith('sim://h/');

/** The worker's receives from the high queue answer [] when `blind` says so; nothing else changes. */
const blindHigh =
  (blind: (waitSeconds: number) => boolean) =>
  (inner: TaskQueues, kind: string): TaskQueues =>
    kind !== 'worker'
      ? inner
      : {
          ...inner,
          receive: async (url, opts) =>
            isHighQueue(url) && blind(opts.waitSeconds) ? [] : inner.receive(url, opts),
        };

/** Broken task-priority protocols (invariant 11, and the lost wake-up of invariant 2). */
export const PRIORITY_VARIANTS: Variant[] = [
  {
    name: 'normal-first',
    breaks: 11,
    description:
      'the slice drains the normal queue first: the high queue is looked at only when the normal one is empty (its per-batch short poll is skipped)',
    tasks: blindHigh((waitSeconds) => waitSeconds <= 0),
  },
  {
    name: 'empty-ignores-high',
    breaks: 2,
    description:
      'the "empty" decision long-polls the normal queue only: a high task a short poll missed is left in a store marked idle (lost wake-up)',
    tasks: blindHigh((waitSeconds) => waitSeconds > 0),
  },
];
