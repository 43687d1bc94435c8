import type { SimContext } from './context.js';
import type { SimMessage } from './sim-sqs.js';
import type { StoreState, TaskTrack } from './world-view.js';

/** The longest SQS pauses between two moved messages in this model (on top of the rate's interval). */
const MOVE_PAUSE_MAX_MS = 4_000;

/** One StartMessageMoveTask: the dead letters present when it started, moved one at a time at its rate. */
interface Move {
  state: StoreState;
  left: SimMessage[];
  everyMs: number;
  nextAt: number;
}

/**
 * SQS's dead-letter redrive as the admin's `redrive` port starts it (StartMessageMoveTask from the store DLQ
 * back to its work queue) and as the reconciler's `redriveRunning` sees it (ListMessageMoveTasks): an
 * asynchronous move at up to `rate` messages a second (often slower: `MOVE_PAUSE_MAX_MS`), each message sent anew (a new message id, receive
 * count 0, visible at once) with no enqSeq bump — what makes a worker that drains faster than the move feeds
 * see an empty queue mid-move. One move per DLQ at a time; a second start while one runs is refused, as SQS
 * refuses it.
 */
export class RedriveMoves {
  private readonly moves = new Map<string, Move>();

  constructor(
    private readonly ctx: SimContext,
    private readonly taskOf: (body: string) => TaskTrack | undefined,
  ) {}

  running(state: StoreState): boolean {
    return this.moves.has(state.spec.storeId);
  }

  /** Starts moving the DLQ's messages; how many it will move. */
  start(state: StoreState, ratePerSecond: number): number {
    if (this.running(state))
      throw new Error('AWS.SimpleQueueService.UnsupportedOperation: a move task is running');
    const left = [...state.dlq.messages.values()];
    if (left.length === 0) return 0;
    const everyMs = 1000 / ratePerSecond;
    const nextAt = this.ctx.now + everyMs + this.ctx.rng.int(0, MOVE_PAUSE_MAX_MS);
    this.moves.set(state.spec.storeId, { state, left, everyMs, nextAt });
    this.ctx.sched.log(
      `sqs: moving ${left.length} dead letter(s) of ${state.spec.storeId} back at ${ratePerSecond}/s`,
    );
    return left.length;
  }

  nextAt(): number | undefined {
    let min: number | undefined;
    for (const move of this.moves.values()) if (min === undefined || move.nextAt < min) min = move.nextAt;
    return min;
  }

  /** Moves every message due by now. */
  fire(): void {
    const { ctx } = this;
    for (const [storeId, move] of this.moves) {
      while (move.nextAt <= ctx.now && move.left.length > 0) {
        const message = move.left.shift() as SimMessage;
        // The rate is a ceiling, not a promise: SQS moves at its own pace, up to seconds between messages.
        move.nextAt += move.everyMs + ctx.rng.int(0, MOVE_PAUSE_MAX_MS);
        if (!move.state.dlq.messages.has(message.id)) continue;
        move.state.dlq.remove(message, ctx.now);
        move.state.queue.send(message.body, ctx.now);
        const track = this.taskOf(message.body);
        if (track) {
          track.deadLettered--;
          track.copies++;
        }
        ctx.stats.redriven++;
      }
      if (move.left.length === 0) {
        this.moves.delete(storeId);
        ctx.sched.log(`sqs: the move of ${storeId}'s dead letters ended`);
      }
    }
  }
}
