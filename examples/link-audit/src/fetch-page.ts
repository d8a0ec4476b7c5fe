import { parsePage } from './parse-page.js';

/** What one checked page looks like in the checkpoint and the result. */
export interface PageReport {
  url: string;
  /** The HTTP status, or null when no response came (DNS, refused, timeout). */
  status: number | null;
  title: string;
  words: number;
  /** Links found on the page (HTML pages only). */
  links: string[];
  /** Why the page is broken, when it is. */
  problem?: string;
}

/** Pages larger than this are counted as broken rather than read into memory. */
export const MAX_PAGE_BYTES = 5 * 1024 * 1024;

export interface FetchOptions {
  /** The task's cancellation: aborts the request at once. */
  signal: AbortSignal;
  timeoutMs: number;
  /** Sent as Idempotency-Key: the same for every retry of this page in this task. */
  idempotencyKey: string;
}

/**
 * GETs one page and reports on it. The page's own failures (4xx/5xx, timeout, refused) are
 * findings of the audit, not errors of the task; only a cancellation propagates.
 */
export async function fetchPage(url: string, options: FetchOptions): Promise<PageReport> {
  const empty = { url, title: '', words: 0, links: [] };
  let response: Response;
  try {
    response = await fetch(url, {
      redirect: 'follow',
      headers: { Accept: 'text/html', 'Idempotency-Key': options.idempotencyKey },
      signal: AbortSignal.any([options.signal, AbortSignal.timeout(options.timeoutMs)]),
    });
  } catch (error) {
    options.signal.throwIfAborted();
    const reason = error instanceof Error ? (error.cause ?? error) : error;
    return { ...empty, status: null, problem: `no response: ${String(reason)}` };
  }
  if (!response.ok) {
    await response.body?.cancel();
    return { ...empty, status: response.status, problem: `HTTP ${response.status}` };
  }
  const length = Number(response.headers.get('content-length') ?? '0');
  if (length > MAX_PAGE_BYTES) {
    await response.body?.cancel();
    return { ...empty, status: response.status, problem: `larger than ${MAX_PAGE_BYTES} bytes` };
  }
  const type = response.headers.get('content-type') ?? '';
  if (!type.includes('html')) {
    await response.body?.cancel();
    return { ...empty, status: response.status };
  }
  let html: string;
  try {
    html = await response.text();
  } catch (error) {
    options.signal.throwIfAborted();
    return { ...empty, status: response.status, problem: `body not read: ${String(error)}` };
  }
  return { url, status: response.status, ...parsePage(html, response.url || url) };
}
