import type { ApiClient } from './client.js';
import type { ProgressStream } from './progress.js';

/** What a command needs: the API (resolved on first use) and where and how to print. */
export interface CliContext {
  client(): Promise<ApiClient>;
  /** --json: machine-readable output on stdout. */
  json: boolean;
  stdout: (text: string) => void;
  stderr: ProgressStream;
}

/** Prints a result: as JSON with --json, else with the command's human rendering (pretty JSON by default). */
export const print = (ctx: CliContext, value: unknown, human?: (value: never) => string): void => {
  if (ctx.json) ctx.stdout(`${JSON.stringify(value)}\n`);
  else ctx.stdout(`${human ? human(value as never) : JSON.stringify(value, null, 2)}\n`);
};

/** Fixed-width columns for lists. */
export const table = (header: string[], rows: (string | number)[][]): string => {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i] ?? '').length)));
  const line = (cells: (string | number)[]) =>
    cells
      .map((c, i) => String(c).padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
};

/** `--overrides '{"ratePerSecond":10}'` and the like. */
export const parseJsonOption = (name: string, raw: string | undefined): unknown => {
  if (raw === undefined) return undefined;
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    throw new Error(`--${name} must be JSON, e.g. '{"ratePerSecond":10}'`);
  }
};
