import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { HistoryRecordSchema, type HistoryRecord } from './records.js';

export class HistoryFormatError extends Error {
  constructor(
    readonly path: string,
    readonly line: number,
    detail: string,
  ) {
    super(`${path}:${line}: not a history record: ${detail}`);
    this.name = 'HistoryFormatError';
  }
}

/** Parses one history line; throws a HistoryFormatError naming the line and what is wrong. */
export function parseHistoryLine(text: string, path: string, line: number): HistoryRecord {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new HistoryFormatError(path, line, (error as Error).message);
  }
  const parsed = HistoryRecordSchema.safeParse(value);
  if (!parsed.success) {
    const issues = parsed.error.issues.map(
      (i) => `${i.path.join('.') || '(record)'}: ${i.message}`,
    );
    throw new HistoryFormatError(path, line, issues.join('; '));
  }
  return parsed.data;
}

/** Reads a whole history file (blank lines are skipped). */
export async function readHistory(path: string): Promise<HistoryRecord[]> {
  const records: HistoryRecord[] = [];
  const lines = createInterface({ input: createReadStream(path), crlfDelay: Infinity });
  let number = 0;
  for await (const text of lines) {
    number += 1;
    if (text.trim() === '') continue;
    records.push(parseHistoryLine(text, path, number));
  }
  return records;
}
