import { describe, expect, it } from 'vitest';
import { readFrameRate, type ByteReader } from './mp4';

const bytesReader =
  (bytes: Uint8Array): ByteReader =>
  async (offset, length) =>
    bytes.subarray(offset, offset + length);

/** A box: 32-bit size, type, content. */
function box(type: string, ...content: Uint8Array[]): Uint8Array {
  const size = 8 + content.reduce((n, c) => n + c.length, 0);
  const out = new Uint8Array(size);
  new DataView(out.buffer).setUint32(0, size);
  out.set(new TextEncoder().encode(type), 4);
  let at = 8;
  for (const c of content) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

function words(...values: number[]): Uint8Array {
  const out = new Uint8Array(values.length * 4);
  values.forEach((v, i) => new DataView(out.buffer).setUint32(i * 4, v));
  return out;
}

const handler = (kind: string) => box('hdlr', words(0, 0), new TextEncoder().encode(kind), words(0, 0, 0));
const track = (kind: string, timescale: number, stts: number[]) =>
  box(
    'trak',
    box(
      'mdia',
      box('mdhd', words(0, 0, 0, timescale, 0, 0)),
      handler(kind),
      box('minf', box('stbl', box('stts', words(0, stts.length / 2, ...stts)))),
    ),
  );

describe('readFrameRate', () => {
  it('takes the video track, after mdat, at NTSC rates', async () => {
    const file = new Uint8Array([
      ...box('ftyp', new TextEncoder().encode('isom')),
      ...box('mdat', new Uint8Array(100)),
      ...box('moov', track('soun', 48000, [10, 1024]), track('vide', 30000, [300, 1001])),
    ]);
    expect(await readFrameRate(bytesReader(file))).toBe(29.97);
  });

  it('gives null for what is not an MP4, or has no video track', async () => {
    expect(await readFrameRate(bytesReader(new TextEncoder().encode('not a video at all')))).toBeNull();
    expect(await readFrameRate(bytesReader(box('moov', track('soun', 48000, [10, 1024]))))).toBeNull();
    // A moov that claims more bytes than the file holds.
    const cut = box('moov', track('vide', 30, [30, 1])).subarray(0, 40);
    expect(await readFrameRate(bytesReader(cut))).toBeNull();
  });
});
