/**
 * What a message body may hold on its way through SQS. SQS accepts #x9 | #xA | #xD | #x20–#xD7FF |
 * #xE000–#xFFFD | #x10000–#x10FFFF; the local emulator (fauxqs) checks UTF-16 code units against the same
 * list without the astral range, so it refuses every emoji. Bodies are JSON, so every other character can
 * travel as a `\uXXXX` escape (an astral one as its surrogate pair): local mode and AWS then accept exactly
 * the same tasks, and `JSON.parse` gives back the same strings, code unit for code unit.
 */
// eslint-disable-next-line no-control-regex -- the tab, newline and carriage return SQS allows are the point
const SQS_UNSAFE = /[^\x09\x0A\x0D\x20-\uD7FF\uE000-\uFFFD]/g;

const escapeCodeUnit = (unit: string): string => `\\u${unit.charCodeAt(0).toString(16).padStart(4, '0')}`;

/**
 * `JSON.stringify(value)` with every character outside SQS's safe set written as a JSON escape. Such
 * characters can only stand inside JSON strings (the syntax is ASCII), where an escape means the same.
 */
export const sqsSafeJson = (value: unknown): string =>
  JSON.stringify(value).replace(SQS_UNSAFE, escapeCodeUnit);

/** A message attribute carries text, not JSON: characters SQS would refuse become U+FFFD. */
export const sqsSafeText = (text: string): string => text.replace(SQS_UNSAFE, '\uFFFD');

const UNPAIRED_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * The path of the first string (object key or value) holding an unpaired surrogate, if any. Such a string
 * is not Unicode text: no UTF-8 encoding exists for it, so the marketplace could not receive it as sent.
 */
export const unpairedSurrogatePath = (
  value: unknown,
  path: (string | number)[] = [],
): (string | number)[] | undefined => {
  if (typeof value === 'string') return UNPAIRED_SURROGATE.test(value) ? path : undefined;
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) {
      const found = unpairedSurrogatePath(item, [...path, index]);
      if (found) return found;
    }
    return undefined;
  }
  if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      if (UNPAIRED_SURROGATE.test(key)) return [...path, key];
      const found = unpairedSurrogatePath(item, [...path, key]);
      if (found) return found;
    }
  }
  return undefined;
};
