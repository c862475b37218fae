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
