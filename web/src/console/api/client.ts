/** Talks to loupe: its admin endpoints and the Firebase APIs, as the owner. */

/**
 * The credential loupe treats as the project owner (rules do not apply), and
 * the mark of the console's requests (its queries do not count as needing indexes).
 */
export const ownerHeaders = { Authorization: 'Bearer owner', 'X-Loupe-Console': '1' };

/** An error answer from loupe, with the message the API gave. */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

type Options = Omit<RequestInit, 'body'> & { json?: unknown; body?: BodyInit };

/** Calls path as the owner and returns its JSON body (undefined for an empty one). */
export async function api<T>(path: string, opts: Options = {}): Promise<T> {
  const { json, headers, ...rest } = opts;
  const init: RequestInit = { ...rest, headers: { ...ownerHeaders, ...(headers as Record<string, string>) } };
  if (json !== undefined) {
    init.body = JSON.stringify(json);
    init.headers = { ...init.headers, 'Content-Type': 'application/json' };
  }
  const res = await fetch(path, init);
  // A path no loupe service claims falls through to the hosted app's HTML.
  if (res.ok && res.headers.get('Content-Type')?.startsWith('text/html'))
    throw new ApiError(`${path.split('?')[0]} is not served by this loupe`, 404);
  const text = await res.text();
  if (!res.ok) throw new ApiError(errorMessage(text) || `${res.status} ${res.statusText}`, res.status);
  return (text ? JSON.parse(text) : undefined) as T;
}

function errorMessage(text: string): string {
  try {
    const body = JSON.parse(text) as { error?: { message?: string } | string; message?: string };
    if (typeof body.error === 'string') return body.error;
    return body.error?.message ?? body.message ?? text;
  } catch {
    return text.trim();
  }
}

/** The message of anything thrown, for a toast. */
export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** How far a long operation is: done of total documents. */
export type Progress = { done: number; total: number };

function isProgress(v: unknown): v is Progress {
  if (typeof v !== 'object' || v === null) return false;
  const keys = Object.keys(v);
  const p = v as Partial<Progress>;
  return keys.length === 2 && typeof p.done === 'number' && typeof p.total === 'number';
}

/**
 * Calls path as the owner asking for its progress (Accept: application/x-ndjson):
 * loupe answers JSON lines {"done", "total"} as the work goes, told to onProgress,
 * then the usual answer, which this returns, or throws as an ApiError with the
 * server's message.
 */
export async function apiWithProgress<T>(
  path: string,
  init: RequestInit,
  onProgress: (p: Progress) => void,
): Promise<T> {
  const res = await fetch(path, {
    ...init,
    headers: { ...ownerHeaders, Accept: 'application/x-ndjson', ...(init.headers as Record<string, string>) },
  });
  if (!res.ok) {
    const text = await res.text();
    throw new ApiError(errorMessage(text) || `${res.status} ${res.statusText}`, res.status);
  }
  if (res.headers.get('Content-Type')?.startsWith('text/html'))
    throw new ApiError(`${path.split('?')[0]} is not served by this loupe`, 404);
  let last: unknown;
  let rest = '';
  const take = (line: string) => {
    if (!line.trim()) return;
    const v: unknown = JSON.parse(line);
    if (isProgress(v)) onProgress(v);
    else last = v;
  };
  const reader = res.body?.getReader();
  const decoder = new TextDecoder();
  for (;;) {
    const r = await reader?.read();
    if (!r || r.done) break;
    rest += decoder.decode(r.value, { stream: true });
    const lines = rest.split('\n');
    rest = lines.pop() ?? '';
    lines.forEach(take);
  }
  take(rest + decoder.decode());
  if (last === undefined)
    throw new ApiError(`${path.split('?')[0]}: the answer ended before its result`, 502);
  const failed = (last as { error?: { message?: string; code?: number } }).error;
  if (failed) throw new ApiError(failed.message ?? JSON.stringify(failed), failed.code ?? 500);
  return last as T;
}

/** "42% (4,200 of 10,000 documents)" */
export function progressText({ done, total }: Progress): string {
  const pct = total ? Math.floor((done * 100) / total) : 100;
  return `${pct}% (${done.toLocaleString('en-US')} of ${total.toLocaleString('en-US')} ${total === 1 ? 'document' : 'documents'})`;
}
