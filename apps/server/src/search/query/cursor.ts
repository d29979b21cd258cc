import { badRequest, fail, OperationOutcomeError } from '@hearth/core';

/** Where the next page starts: the sort keys of the last row served, in text form. */
export interface Cursor {
  /** 0: rows with a value for the first sort key; 1: the rows without one, after them. */
  phase: 0 | 1;
  keys: (string | null)[];
  /** Rows served before the next page (for the `previous` link by offset). */
  offset: number;
  /** The order the cursor belongs to. */
  signature: string;
}

export function encodeCursor(cursor: Cursor): string {
  return Buffer.from(JSON.stringify([cursor.phase, cursor.keys, cursor.offset, cursor.signature])).toString(
    'base64url',
  );
}

export function decodeCursor(text: string, signature: string): Cursor {
  try {
    const [phase, keys, offset, sig] = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as [
      number,
      (string | null)[],
      number,
      string,
    ];
    if ((phase !== 0 && phase !== 1) || !Array.isArray(keys) || typeof offset !== 'number' || typeof sig !== 'string') {
      throw new Error('shape');
    }
    if (!keys.every((k) => k === null || typeof k === 'string')) {
      throw new Error('keys');
    }
    if (sig !== signature) {
      fail(badRequest('_cursor belongs to a search with another _sort; follow the links of this search', '_cursor'));
    }
    return { phase, keys, offset, signature };
  } catch (err) {
    if (err instanceof OperationOutcomeError) {
      throw err;
    }
    fail(badRequest('_cursor is not a cursor from a link of this server', '_cursor'));
  }
}
