import { describe, expect, it } from 'vitest';
import type { ReceivedMessage, TaskQueues } from '../../../lambdas/core/ports.js';
import { bySource, receiveBatch } from '../../../lambdas/core/slice-receive.js';
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
      budget: 4,
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

const queued = (id: string): ReceivedMessage => ({
  messageId: id,
  receiptHandle: `r-${id}`,
  body: '{}',
  receiveCount: 1,
  sentAt: 0,
});

/**
 * Queues by URL; each receive takes up to maxMessages, after `arrive` (tasks landing during that poll), and is
 * recorded as [url, maxMessages, waitSeconds, visibilitySeconds].
 */
const queues = (held: Record<string, string[]>, arrive?: (url: string, waitSeconds: number) => string[]) => {
  const receives: [string, number, number, number][] = [];
  const tasks = {
    receive: async (
      url: string,
      o: { maxMessages: number; waitSeconds: number; visibilitySeconds: number },
    ): Promise<ReceivedMessage[]> => {
      receives.push([url, o.maxMessages, o.waitSeconds, o.visibilitySeconds]);
      const queue = (held[url] ??= []);
      queue.push(...(arrive?.(url, o.waitSeconds) ?? []));
      return queue.splice(0, o.maxMessages).map(queued);
    },
  } as unknown as TaskQueues;
  return { tasks, receives, held };
};

const ids = (r: { batch: { messageId: string; queueUrl: string }[]; trickled: boolean }) => ({
  batch: r.batch.map((m) => `${m.queueUrl}:${m.messageId}`),
  trickled: r.trickled,
});

describe('receiveBatch', () => {
  const withHigh = sliceStore({ priorityQueueUrl: 'h-url' });
  const opts = (want: number, budget = want) => ({
    want,
    budget,
    emptyPollSeconds: 20,
    visibilitySeconds: () => 40,
  });

  it('takes a backlog from the high queue first, without touching the work queue', async () => {
    const q = queues({ 'h-url': ['h1', 'h2'], 'q-url': ['n1'] });
    expect(ids(await receiveBatch(q.tasks, withHigh, opts(10)))).toEqual({
      batch: ['h-url:h1', 'h-url:h2'],
      trickled: false,
    });
    expect(q.receives).toEqual([['h-url', 10, 0, 40]]);
  });

  it('takes the work queue’s backlog when the high queue is empty', async () => {
    const q = queues({ 'q-url': ['n1'] });
    expect(ids(await receiveBatch(q.tasks, withHigh, opts(10)))).toEqual({
      batch: ['q-url:n1'],
      trickled: false,
    });
    expect(q.receives).toEqual([
      ['h-url', 10, 0, 40],
      ['q-url', 10, 0, 40],
    ]);
  });

  it('asks each receive for the visibility as of its own start', async () => {
    let seconds = 40;
    const q = queues({});
    await receiveBatch(q.tasks, sliceStore(), {
      want: 10,
      budget: 10,
      emptyPollSeconds: 20,
      visibilitySeconds: () => seconds--,
    });
    expect(q.receives).toEqual([
      ['q-url', 10, 0, 40],
      ['q-url', 10, 20, 39],
    ]);
  });

  it('without a high queue: a short poll, then the empty check’s long poll, whose tasks are a trickle', async () => {
    const q = queues({}, (_url, wait) => (wait > 0 ? ['n1'] : []));
    expect(ids(await receiveBatch(q.tasks, sliceStore(), opts(10)))).toEqual({
      batch: ['q-url:n1'],
      trickled: true,
    });
    expect(q.receives).toEqual([
      ['q-url', 10, 0, 40],
      ['q-url', 10, 20, 40],
    ]);
  });

  it('answers empty, not a trickle, when the empty check finds nothing', async () => {
    const lone = queues({});
    const both = queues({});
    const last = queues({});
    expect([
      ids(await receiveBatch(lone.tasks, sliceStore(), opts(10))),
      ids(await receiveBatch(both.tasks, withHigh, opts(10))),
      ids(await receiveBatch(last.tasks, withHigh, opts(1))),
    ]).toEqual([
      { batch: [], trickled: false },
      { batch: [], trickled: false },
      { batch: [], trickled: false },
    ]);
  });

  it('shares an odd `want` between the two long polls, the larger part to the high queue', async () => {
    const q = queues({}, (url, wait) => (wait > 0 ? [`${url[0]}1`, `${url[0]}2`, `${url[0]}3`] : []));
    expect(ids(await receiveBatch(q.tasks, withHigh, opts(5)))).toEqual({
      batch: ['h-url:h1', 'h-url:h2', 'h-url:h3', 'q-url:q1', 'q-url:q2'],
      trickled: true,
    });
    expect(q.receives.slice(2)).toEqual([
      ['h-url', 3, 20, 40],
      ['q-url', 2, 20, 40],
    ]);
  });

  it('with two messages left, polls both queues side by side and takes one from each', async () => {
    const q = queues({}, (url, wait) => (wait > 0 ? [`${url[0]}1`] : []));
    expect(ids(await receiveBatch(q.tasks, withHigh, opts(2)))).toEqual({
      batch: ['h-url:h1', 'q-url:q1'],
      trickled: true,
    });
  });

  describe('with one message left to handle (the two long polls one after the other)', () => {
    it('takes a task the high queue’s long poll finds, without polling the work queue', async () => {
      const q = queues({}, (url, wait) => (wait > 0 ? [`${url[0]}1`] : []));
      expect(ids(await receiveBatch(q.tasks, withHigh, opts(1)))).toEqual({
        batch: ['h-url:h1'],
        trickled: true,
      });
      expect(q.receives).toEqual([
        ['h-url', 1, 0, 40],
        ['q-url', 1, 0, 40],
        ['h-url', 1, 20, 40],
      ]);
    });

    it('long-polls the work queue for one when the high queue’s long poll finds nothing', async () => {
      const q = queues({}, (url, wait) => (wait > 0 && url === 'q-url' ? ['q1', 'q2'] : []));
      expect(ids(await receiveBatch(q.tasks, withHigh, opts(1)))).toEqual({
        batch: ['q-url:q1'],
        trickled: true,
      });
      expect(q.receives.slice(2)).toEqual([
        ['h-url', 1, 20, 40],
        ['q-url', 1, 20, 40],
      ]);
    });
  });

  it('with one call left in the slice’s time but a larger budget, races both polls for one each', async () => {
    const q = queues({}, (url, wait) => (wait > 0 ? [`${url[0]}1`] : []));
    const r = await receiveBatch(q.tasks, withHigh, opts(1, 10));
    // Both answered at once: one batch of `want`, the other's message the rest (handed back by the slice).
    expect(ids(r)).toEqual({ batch: ['h-url:h1'], trickled: true });
    expect(await r.rest).toEqual({ status: 'fulfilled', value: [{ ...queued('q1'), queueUrl: 'q-url' }] });
    expect(q.receives.slice(2)).toEqual([
      ['h-url', 1, 20, 40],
      ['q-url', 1, 20, 40],
    ]);
  });

  it('fails when the work queue’s long poll fails and the high queue’s found nothing', async () => {
    const tasks = {
      receive: async (url: string, { waitSeconds }: { waitSeconds: number }) => {
        if (waitSeconds > 0 && url === 'q-url') throw new Error('SQS unavailable');
        return [];
      },
    } as unknown as TaskQueues;
    await expect(receiveBatch(tasks, withHigh, opts(4))).rejects.toThrow('SQS unavailable');
  });
});

/**
 * The empty check's two long polls race: the first to bring messages is the batch at once, the other (still
 * polling) its `rest`. Each queue's long poll answers when the test says so.
 */
describe('receiveBatch, the empty check’s race', () => {
  const withHigh = sliceStore({ priorityQueueUrl: 'h-url' });
  const controlled = () => {
    const answer: Record<string, (messages: string[] | Error) => void> = {};
    const tasks = {
      receive: async (url: string, { waitSeconds }: { waitSeconds: number }) => {
        if (waitSeconds === 0) return [];
        return new Promise<ReceivedMessage[]>((resolve, reject) => {
          answer[url] = (messages) =>
            messages instanceof Error ? reject(messages) : resolve(messages.map(queued));
        });
      },
    } as unknown as TaskQueues;
    return { tasks, answer };
  };
  const settle = () => new Promise((resolve) => setImmediate(resolve));
  const start = (tasks: TaskQueues) => {
    let done: Awaited<ReturnType<typeof receiveBatch>> | undefined;
    const receiving = receiveBatch(tasks, withHigh, {
      want: 4,
      budget: 4,
      emptyPollSeconds: 1,
      visibilitySeconds: () => 30,
    });
    void receiving.then((r) => (done = r));
    return { receiving, done: () => done };
  };

  it.each([
    ['h-url', 'q-url'],
    ['q-url', 'h-url'],
  ])(
    'takes what %s’s long poll brings at once, with %s’s still polling as the rest',
    async (first, other) => {
      const q = controlled();
      const run = start(q.tasks);
      await settle();
      q.answer[first]?.(['m1', 'm2']);
      const r = await run.receiving;
      expect(ids(r)).toEqual({ batch: [`${first}:m1`, `${first}:m2`], trickled: true });
      let rest: unknown;
      void r.rest?.then((answer) => (rest = answer));
      await settle();
      expect(rest).toBeUndefined();
      q.answer[other]?.(['m3']);
      await settle();
      expect(rest).toEqual({ status: 'fulfilled', value: [{ ...queued('m3'), queueUrl: other }] });
    },
  );

  it('carries the other long poll’s failure in the rest, not in the batch', async () => {
    const q = controlled();
    const run = start(q.tasks);
    await settle();
    q.answer['q-url']?.(['m1']);
    const r = await run.receiving;
    q.answer['h-url']?.(new Error('SQS unavailable'));
    expect(await r.rest).toEqual({ status: 'rejected', reason: new Error('SQS unavailable') });
  });

  it.each([
    ['h-url', 'q-url'],
    ['q-url', 'h-url'],
  ])('waits for %s’s long poll when %s’s answers empty, and has no rest', async (later, first) => {
    const q = controlled();
    const run = start(q.tasks);
    await settle();
    q.answer[first]?.([]);
    await settle();
    expect(run.done()).toBeUndefined();
    q.answer[later]?.(['m1']);
    const r = await run.receiving;
    expect(ids(r)).toEqual({ batch: [`${later}:m1`], trickled: true });
    expect(r.rest).toBeUndefined();
  });

  it('puts both answers in the batch, high first, when the second is in before the slice looks', async () => {
    const q = controlled();
    const run = start(q.tasks);
    await settle();
    q.answer['q-url']?.(['q1']);
    q.answer['h-url']?.(['h1']);
    const r = await run.receiving;
    expect(ids(r)).toEqual({ batch: ['h-url:h1', 'q-url:q1'], trickled: true });
    expect(r.rest).toBeUndefined();
  });
});

describe('bySource', () => {
  it('groups messages by their queue, in first-seen order, each group in order', () => {
    const m = (id: string, queueUrl: string) => ({ id, queueUrl });
    expect(bySource([m('a1', 'a'), m('b1', 'b'), m('a2', 'a'), m('b2', 'b')])).toEqual([
      ['a', [m('a1', 'a'), m('a2', 'a')]],
      ['b', [m('b1', 'b'), m('b2', 'b')]],
    ]);
    expect(bySource([])).toEqual([]);
  });
});

describe('receiveBatch, with the confirm queue (issue #11)', () => {
  const withHigh = sliceStore({ priorityQueueUrl: 'h-url' });
  const opts = (extra: { handoff?: boolean; longFirst?: boolean }) => ({
    want: 10,
    budget: 10,
    emptyPollSeconds: 20,
    visibilitySeconds: () => 40,
    ...extra,
  });

  it('hands the empty decision on when both short polls come back empty, without a long poll', async () => {
    const q = queues({}, (_url, wait) => (wait > 0 ? ['late'] : []));
    const answer = await receiveBatch(q.tasks, withHigh, opts({ handoff: true }));
    expect(answer).toStrictEqual({ batch: [], trickled: false, handoff: true });
    expect(q.receives).toEqual([
      ['h-url', 10, 0, 40],
      ['q-url', 10, 0, 40],
    ]);
  });

  it('takes a backlog as ever when it may hand on: only an empty look is handed on', async () => {
    const q = queues({ 'q-url': ['n1'] });
    const answer = await receiveBatch(q.tasks, withHigh, opts({ handoff: true }));
    expect(answer).toStrictEqual({
      batch: [{ ...queued('n1'), queueUrl: 'q-url' }],
      trickled: false,
    });
  });

  it('goes straight to the long polls for a confirm slice’s first look, and what they find is a trickle', async () => {
    const q = queues({ 'q-url': ['n1'] });
    expect(ids(await receiveBatch(q.tasks, withHigh, opts({ longFirst: true })))).toEqual({
      batch: ['q-url:n1'],
      trickled: true,
    });
    expect(q.receives).toEqual([
      ['h-url', 5, 20, 40],
      ['q-url', 5, 20, 40],
    ]);
  });

  it('makes the empty decision itself on a confirm slice’s first look, even when told it may hand on', async () => {
    const q = queues({});
    const answer = await receiveBatch(q.tasks, sliceStore(), opts({ longFirst: true, handoff: true }));
    expect(answer).toStrictEqual({ batch: [], trickled: false });
    expect(q.receives).toEqual([['q-url', 10, 20, 40]]);
  });
});
