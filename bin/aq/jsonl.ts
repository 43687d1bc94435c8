import { readFile } from 'node:fs/promises';
import { CliError } from './errors.js';

export type JsonlLine = { line: number; value: unknown } | { line: number; error: string };

/** Each non-blank line of a JSON Lines file, parsed (a line that is not JSON is reported, not thrown). */
export const readJsonl = async (file: string): Promise<JsonlLine[]> => {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new CliError(`cannot read ${file}: ${(error as Error).message}`);
  }
  const out: JsonlLine[] = [];
  text.split(/\r?\n/).forEach((raw, i) => {
    if (raw.trim() === '') return;
    try {
      out.push({ line: i + 1, value: JSON.parse(raw) as unknown });
    } catch {
      out.push({ line: i + 1, error: 'not valid JSON' });
    }
  });
  return out;
};
