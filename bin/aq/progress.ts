/** The part of a stream the progress bar needs (process.stderr, or a fake in tests). */
export interface ProgressStream {
  isTTY?: boolean;
  write(text: string): unknown;
}

const WIDTH = 30;

/**
 * A one-line progress bar redrawn in place, at most ten times a second; nothing at all when the stream
 * is not a terminal (CI logs, pipes), where the final summary is enough.
 */
export class ProgressBar {
  private lastDraw = 0;
  private readonly started = Date.now();

  constructor(
    private readonly stream: ProgressStream,
    private readonly total: number,
    private readonly label: string,
  ) {}

  update(done: number, failed: number, force = false): void {
    if (!this.stream.isTTY) return;
    const now = Date.now();
    if (!force && now - this.lastDraw < 100) return;
    this.lastDraw = now;
    const ratio = this.total === 0 ? 1 : done / this.total;
    const filled = Math.round(ratio * WIDTH);
    const rate = done / Math.max(0.001, (now - this.started) / 1000);
    this.stream.write(
      `\r${this.label} [${'#'.repeat(filled)}${'-'.repeat(WIDTH - filled)}] ${done}/${this.total}` +
        ` ${rate.toFixed(0)}/s${failed > 0 ? ` ${failed} failed` : ''}`,
    );
  }

  finish(done: number, failed: number): void {
    this.update(done, failed, true);
    if (this.stream.isTTY) this.stream.write('\n');
  }
}
