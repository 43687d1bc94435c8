/** A DynamoDB LastEvaluatedKey as an opaque, URL-safe page cursor; undefined when there is no next page. */
export const encodeCursor = (key: Record<string, unknown> | undefined): string | undefined =>
  key ? Buffer.from(JSON.stringify(key)).toString('base64url') : undefined;

/** The ExclusiveStartKey a cursor from `encodeCursor` stands for; undefined for no (or an empty) cursor. */
export const decodeCursor = (cursor: string | undefined): Record<string, unknown> | undefined =>
  cursor ? (JSON.parse(Buffer.from(cursor, 'base64url').toString()) as Record<string, unknown>) : undefined;
