import type { Rng } from './rng.js';

/**
 * One simulated SQS standard queue: visibility timeouts, DelaySeconds, receive counts, receipt handles
 * (only the latest one deletes), redrive after maxReceiveCount, best-effort order, and the history of its
 * size so that "approximate" counts can be answered from up to a minute ago.
 */
export interface SimMessage {
  readonly id: string;
  /** SQS's MessageId: an at-least-once duplicate of a message carries the original's. */
  readonly messageId: string;
  readonly body: string;
  readonly sentAt: number;
  visibleAt: number;
  receiveCount: number;
  receipt: string | undefined;
  /** Set on attention copies SQS itself duplicated (at-least-once): not the protocol's doing. */
  readonly duplicate: boolean;
}

/** Messages whose visibility times are this close may be received in either order (best-effort ordering). */
export const REORDER_WINDOW_MS = 50;
/** How stale an "approximate" count can be (AWS: about a minute). */
export const APPROXIMATE_LAG_MS = 60_000;

export class SimQueue {
  readonly messages = new Map<string, SimMessage>();
  private readonly sizeHistory: { at: number; size: number }[] = [{ at: 0, size: 0 }];
  private seq = 0;

  constructor(
    readonly url: string,
    private readonly rng: Rng,
    private readonly maxReceiveCount: number | undefined,
    private readonly onRedrive?: (message: SimMessage) => void,
  ) {}

  private noteSize(now: number): void {
    const last = this.sizeHistory[this.sizeHistory.length - 1];
    if (last && last.at === now) last.size = this.messages.size;
    else this.sizeHistory.push({ at: now, size: this.messages.size });
    // Keep a little more than the lag window.
    while (this.sizeHistory.length > 2 && (this.sizeHistory[1]?.at ?? now) < now - 2 * APPROXIMATE_LAG_MS)
      this.sizeHistory.shift();
  }

  send(body: string, now: number, delayMs = 0, duplicate = false, messageId?: string): SimMessage {
    const id = `${this.url}#${++this.seq}`;
    const message: SimMessage = {
      id,
      messageId: messageId ?? id,
      body,
      sentAt: now,
      visibleAt: now + delayMs,
      receiveCount: 0,
      receipt: undefined,
      duplicate,
    };
    this.messages.set(message.id, message);
    this.noteSize(now);
    return message;
  }

  remove(message: SimMessage, now: number): void {
    this.messages.delete(message.id);
    this.noteSize(now);
  }

  hasVisible(now: number): boolean {
    for (const m of this.messages.values()) if (m.visibleAt <= now) return true;
    return false;
  }

  visible(now: number): SimMessage[] {
    const out: SimMessage[] = [];
    for (const m of this.messages.values()) if (m.visibleAt <= now) out.push(m);
    return out;
  }

  /** Receives up to `max` visible messages, oldest visibility first within a small reordering window. */
  receive(now: number, max: number, visibilityMs: number): SimMessage[] {
    const out: SimMessage[] = [];
    const candidates = this.visible(now).sort((a, b) => a.visibleAt - b.visibleAt);
    while (out.length < max && candidates.length > 0) {
      const head = candidates[0] as SimMessage;
      let window = 1;
      while (
        window < candidates.length &&
        (candidates[window] as SimMessage).visibleAt <= head.visibleAt + REORDER_WINDOW_MS
      )
        window++;
      const index = this.rng.int(0, window - 1);
      const message = candidates.splice(index, 1)[0] as SimMessage;
      message.receiveCount++;
      if (this.maxReceiveCount !== undefined && message.receiveCount > this.maxReceiveCount) {
        this.remove(message, now);
        this.onRedrive?.(message);
        continue;
      }
      message.receipt = `${message.id}@${message.receiveCount}`;
      message.visibleAt = now + visibilityMs;
      out.push(message);
    }
    return out;
  }

  byReceipt(receipt: string): SimMessage | undefined {
    const id = receipt.slice(0, receipt.lastIndexOf('@'));
    const message = this.messages.get(id);
    return message?.receipt === receipt ? message : undefined;
  }

  /** Approximate visible + in-flight + delayed: the true size at some instant in the last minute. */
  approximateSize(now: number): number {
    const at = now - this.rng.int(0, APPROXIMATE_LAG_MS);
    let size = 0;
    for (const entry of this.sizeHistory) {
      if (entry.at > at) break;
      size = entry.size;
    }
    return size;
  }
}
