import { describe, expect, it } from 'vitest';
import type { ReceivedMessage, TaskQueues } from '../../../lambdas/core/ports.js';
import { receiveBatch } from '../../../lambdas/core/slice-receive.js';
import { sliceStore } from '../support/slice-fixtures.js';

/** The empty check of a store with a high-priority queue: two long polls side by side. */
describe('receiveBatch, when one of the two long polls fails', () => {
  it('waits for the other before failing, so the error path counts from when both were done', async () => {
    const events: string[] = [];
    let releaseWork: (messages: ReceivedMessage[]) => void = () => undefined;
    const tasks = {
      receive: async (url: string, { waitSeconds }: { waitSeconds: number }) => {
        if (waitSeconds === 0) return [];
        if (url === 'h-url') {
          events.push('high failed');
          throw new Error('SQS unavailable');
        }
        return new Promise<ReceivedMessage[]>((resolve) => {
          releaseWork = (messages) => {
            events.push('work answered');
            resolve(messages);
          };
        });
      },
    } as unknown as TaskQueues;
    const receiving = receiveBatch(tasks, sliceStore({ priorityQueueUrl: 'h-url' }), {
      want: 4,
      emptyPollSeconds: 1,
      visibilitySeconds: () => 30,
    }).catch((error: unknown) => {
      events.push(`failed: ${(error as Error).message}`);
    });
    await new Promise((resolve) => setImmediate(resolve));
    releaseWork([]);
    await receiving;
    expect(events).toEqual(['high failed', 'work answered', 'failed: SQS unavailable']);
  });
});
