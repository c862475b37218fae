import { ApiError, apiWithProgress, ownerHeaders, type Progress } from '../api/client';

/**
 * Downloads a full export of loupe's data as a .tar.gz, telling onBytes how
 * many bytes have arrived as they arrive; resolves to the file's name and size.
 */
export async function exportArchive(onBytes?: (n: number) => void): Promise<{ name: string; size: number }> {
  const res = await fetch('/emulator/v1/export/archive', { headers: ownerHeaders });
  if (!res.ok) throw new ApiError(await res.text(), res.status);
  const name =
    /filename="([^"]+)"/.exec(res.headers.get('Content-Disposition') ?? '')?.[1] ?? 'loupe-export.tar.gz';
  const chunks: BlobPart[] = [];
  let size = 0;
  const reader = res.body?.getReader();
  for (;;) {
    const r = await reader?.read();
    if (!r || r.done) break;
    chunks.push(r.value);
    size += r.value.byteLength;
    onBytes?.(size);
  }
  const url = URL.createObjectURL(new Blob(chunks, { type: 'application/gzip' }));
  const a = Object.assign(document.createElement('a'), { href: url, download: name });
  a.click();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
  return { name, size };
}

/**
 * Replaces loupe's data with an archive exportArchive made, telling onProgress
 * how many of its documents are read as loupe reads them.
 */
export async function importArchive(file: File, onProgress: (p: Progress) => void = () => undefined) {
  await apiWithProgress<unknown>('/emulator/v1/import/archive', { method: 'POST', body: file }, onProgress);
}
