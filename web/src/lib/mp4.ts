/** Reads up to `length` bytes of a file from `offset` (fewer at its end, none past it). */
export type ByteReader = (offset: number, length: number) => Promise<Uint8Array>;

/** Reads a Blob (a chosen File) piece by piece, without loading all of it. */
export function blobReader(blob: Blob): ByteReader {
  return async (offset, length) => new Uint8Array(await blob.slice(offset, offset + length).arrayBuffer());
}

/**
 * Reads a file at a URL with HTTP Range requests. A server that ignores
 * Range (200 with the whole file) is not read further: the request is
 * aborted and the read fails.
 */
export function urlReader(url: string): ByteReader {
  return async (offset, length) => {
    const abort = new AbortController();
    const res = await fetch(url, {
      headers: { Range: `bytes=${offset}-${offset + length - 1}` },
      signal: abort.signal,
    });
    if (res.status === 416) return new Uint8Array(0);
    if (res.status !== 206) {
      abort.abort();
      throw new Error(`ranged read answered ${res.status}`);
    }
    return new Uint8Array(await res.arrayBuffer());
  };
}

/** The largest moov box read into memory (a long clip's sample tables run to a few MB). */
const MAX_MOOV_BYTES = 64 << 20;
/** How many top-level boxes are walked looking for moov. */
const MAX_TOP_LEVEL_BOXES = 64;

interface Box {
  type: string;
  /** Where its content starts and ends, in the buffer it was found in. */
  start: number;
  end: number;
}

function fourCC(bytes: Uint8Array, at: number): string {
  return String.fromCharCode(bytes[at] ?? 0, bytes[at + 1] ?? 0, bytes[at + 2] ?? 0, bytes[at + 3] ?? 0);
}

/** The boxes between from and to of a buffer; a box that claims more than there is ends the list. */
function children(bytes: Uint8Array, from: number, to: number): Box[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out: Box[] = [];
  let at = from;
  while (at + 8 <= to) {
    let size = view.getUint32(at);
    let header = 8;
    if (size === 1) {
      if (at + 16 > to) break;
      size = Number(view.getBigUint64(at + 8));
      header = 16;
    } else if (size === 0) {
      size = to - at;
    }
    if (size < header || at + size > to) break;
    out.push({ type: fourCC(bytes, at + 4), start: at + header, end: at + size });
    at += size;
  }
  return out;
}

function child(bytes: Uint8Array, box: Box, type: string): Box | undefined {
  return children(bytes, box.start, box.end).find((b) => b.type === type);
}

/** The moov box of a file, read whole, or null when the file has none where it should be. */
async function readMoov(read: ByteReader): Promise<Uint8Array | null> {
  let offset = 0;
  for (let i = 0; i < MAX_TOP_LEVEL_BOXES; i++) {
    const head = await read(offset, 16);
    if (head.length < 8) return null;
    const view = new DataView(head.buffer, head.byteOffset, head.byteLength);
    let size = view.getUint32(0);
    if (size === 1) {
      if (head.length < 16) return null;
      size = Number(view.getBigUint64(8));
    }
    if (size < 8) return null; // 0 (to the end of the file) is only allowed for the last box, mdat.
    if (fourCC(head, 4) === 'moov') {
      if (size > MAX_MOOV_BYTES) return null;
      const moov = await read(offset, size);
      return moov.length === size ? moov : null;
    }
    offset += size;
  }
  return null;
}

/**
 * The frame rate of an MP4 or QuickTime file's video track, from its boxes
 * (moov → trak whose hdlr is 'vide' → mdhd's timescale and stts's sample
 * counts and durations): frames over their total duration, e.g. 30 or
 * 29.97. Null when the file is not one, has no video track, or says nothing
 * usable.
 */
export async function readFrameRate(read: ByteReader): Promise<number | null> {
  const moov = await readMoov(read);
  if (!moov) return null;
  const view = new DataView(moov.buffer, moov.byteOffset, moov.byteLength);
  const [top] = children(moov, 0, moov.length);
  if (!top) return null;
  for (const trak of children(moov, top.start, top.end).filter((b) => b.type === 'trak')) {
    const mdia = child(moov, trak, 'mdia');
    const hdlr = mdia && child(moov, mdia, 'hdlr');
    if (!mdia || !hdlr || hdlr.end - hdlr.start < 12 || fourCC(moov, hdlr.start + 8) !== 'vide') continue;
    const mdhd = child(moov, mdia, 'mdhd');
    const minf = child(moov, mdia, 'minf');
    const stbl = minf && child(moov, minf, 'stbl');
    const stts = stbl && child(moov, stbl, 'stts');
    if (!mdhd || !stts || mdhd.end - mdhd.start < 24 || stts.end - stts.start < 8) return null;
    const timescale = view.getUint32(mdhd.start + (moov[mdhd.start] === 1 ? 20 : 12));
    const entries = view.getUint32(stts.start + 4);
    if (stts.start + 8 + entries * 8 > stts.end) return null;
    let frames = 0;
    let ticks = 0;
    for (let i = 0; i < entries; i++) {
      const count = view.getUint32(stts.start + 8 + i * 8);
      frames += count;
      ticks += count * view.getUint32(stts.start + 12 + i * 8);
    }
    if (!(timescale > 0) || !(frames > 0) || !(ticks > 0)) return null;
    return Math.round(((frames * timescale) / ticks) * 1000) / 1000;
  }
  return null;
}
