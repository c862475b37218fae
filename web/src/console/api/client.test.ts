import { ApiError, apiWithProgress, progressText, type Progress } from './client';

/** Answers fetch with body in these chunks (split anywhere, as a network does). */
function answer(status: number, chunks: string[], type = 'application/x-ndjson') {
  const encoder = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      chunks.forEach((s) => c.enqueue(encoder.encode(s)));
      c.close();
    },
  });
  const fetchMock = vi.fn(async () => new Response(body, { status, headers: { 'Content-Type': type } }));
  vi.stubGlobal('fetch', fetchMock);
  return fetchMock;
}

afterEach(() => vi.unstubAllGlobals());

describe('apiWithProgress', () => {
  it('tells each progress line, split across chunks, and returns the last line', async () => {
    const fetchMock = answer(200, [
      '{"done":0,"tot',
      'al":3}\n{"done":2,"total":3}\n',
      '{"done":3,"total":3}\n{"deleted":3}\n',
    ]);
    const seen: Progress[] = [];
    const res = await apiWithProgress<{ deleted: number }>('/x', { method: 'DELETE' }, (p) => seen.push(p));
    expect(seen).toEqual([
      { done: 0, total: 3 },
      { done: 2, total: 3 },
      { done: 3, total: 3 },
    ]);
    expect(res).toEqual({ deleted: 3 });
    const headers = (fetchMock.mock.calls[0] as unknown as [string, RequestInit])[1].headers as Record<
      string,
      string
    >;
    expect(headers.Accept).toBe('application/x-ndjson');
  });

  it('throws the server’s message when the last line is an error', async () => {
    answer(200, [
      '{"done":0,"total":2}\n{"error":{"code":400,"message":"import archive: line 2 is bad","status":"INVALID_ARGUMENT"}}\n',
    ]);
    const err = await apiWithProgress('/x', {}, () => undefined).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).message).toBe('import archive: line 2 is bad');
    expect((err as ApiError).status).toBe(400);
  });

  it('throws the error of an answer that failed before any progress', async () => {
    answer(400, ['{"error":{"code":400,"message":"not a gzipped tar"}}\n'], 'application/json');
    await expect(apiWithProgress('/x', {}, () => undefined)).rejects.toThrow('not a gzipped tar');
  });

  it('throws when the answer ends before its result', async () => {
    answer(200, ['{"done":0,"total":2}\n']);
    await expect(apiWithProgress('/x', {}, () => undefined)).rejects.toThrow('ended before its result');
  });
});

describe('progressText', () => {
  it('says the percentage, rounded down, and the counts', () => {
    expect(progressText({ done: 4200, total: 10000 })).toBe('42% (4,200 of 10,000 documents)');
    expect(progressText({ done: 999, total: 1000 })).toBe('99% (999 of 1,000 documents)');
  });
});
