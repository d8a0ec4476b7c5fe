import { createSpinner } from 'nanospinner';
import type { TaskSnapshot } from '../types.js';

/** One line a person can read: status, message, what is being asked. */
export function describeSnapshot(snapshot: TaskSnapshot): string {
  const parts: string[] = [snapshot.status];
  if (snapshot.statusMessage) parts.push(`— ${snapshot.statusMessage}`);
  if (snapshot.status === 'input_required') {
    parts.push(`(needs: ${Object.keys(snapshot.inputRequests ?? {}).join(', ')})`);
  }
  return parts.join(' ');
}

/** The result a person wants at the end: the tool's text, or the error. */
export function describeOutcome(snapshot: TaskSnapshot): string {
  if (snapshot.status === 'completed') {
    const texts = (snapshot.result?.content ?? [])
      .map((block) => (block.type === 'text' ? block.text : `[${block.type}]`))
      .filter((t): t is string => typeof t === 'string');
    return texts.join('\n');
  }
  if (snapshot.status === 'failed') {
    return `error ${snapshot.error?.code ?? '?'}: ${snapshot.error?.message ?? 'unknown'}`;
  }
  return describeSnapshot(snapshot);
}

/**
 * The live status line: a spinner on a terminal, one line per change otherwise (a log or a pipe
 * should not fill with spinner frames). Always on stderr, so stdout stays the result.
 */
export function statusLine(enabled: boolean): {
  update(text: string): void;
  stop(text: string, ok: boolean): void;
} {
  if (!enabled) return { update: () => undefined, stop: () => undefined };
  if (!process.stderr.isTTY) {
    let last = '';
    return {
      update(text) {
        if (text !== last) process.stderr.write(`${text}\n`);
        last = text;
      },
      stop(text) {
        if (text !== last) process.stderr.write(`${text}\n`);
      },
    };
  }
  const spinner = createSpinner('', { stream: process.stderr });
  let spinning = false;
  return {
    update(text) {
      if (!spinning) {
        spinner.start({ text });
        spinning = true;
      } else spinner.update({ text });
    },
    stop(text, ok) {
      if (!spinning) spinner.start({ text });
      if (ok) spinner.success({ text });
      else spinner.error({ text });
      spinning = false;
    },
  };
}

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}
