import { adjacentMarkerTime, markerPosition, shortcutFor, stackMarkers } from './video-player';

describe('markerPosition', () => {
  it('is the share of the duration, clamped, and 0 before the duration is known', () => {
    expect(markerPosition(3, 12)).toBe(25);
    expect(markerPosition(20, 12)).toBe(100);
    expect(markerPosition(3, Number.NaN)).toBe(0);
  });
});

describe('stackMarkers', () => {
  it('stacks markers that coincide and keeps the others on the track', () => {
    const placed = stackMarkers(
      [
        { id: 'late', time: 8 },
        { id: 'a', time: 3 },
        { id: 'b', time: 3 },
        { id: 'c', time: 3.05 },
        { id: 'd', time: 5 },
      ],
      10,
    );
    expect(placed.map((m) => [m.id, m.position, m.level])).toEqual([
      ['a', 30, 0],
      ['b', 30, 1],
      ['c', 30.5, 2],
      ['d', 50, 0],
      ['late', 80, 0],
    ]);
  });
});

describe('shortcutFor', () => {
  const key = (k: string, mods: Partial<KeyboardEvent> = {}) =>
    shortcutFor({ key: k, ctrlKey: false, metaKey: false, altKey: false, ...mods });
  it("maps Frame.io's keys", () => {
    expect([' ', 'j', 'K', 'l', 'ArrowLeft', 'ArrowRight', ',', '.', 'c', '?'].map((k) => key(k))).toEqual([
      'toggle',
      'reverse',
      'pause',
      'forward',
      'back5',
      'ahead5',
      'prevFrame',
      'nextFrame',
      'comment',
      'help',
    ]);
  });
  it('jumps between comments with Shift+←/→', () => {
    expect(key('ArrowLeft', { shiftKey: true })).toBe('prevComment');
    expect(key('ArrowRight', { shiftKey: true })).toBe('nextComment');
    expect(key('ArrowRight', { shiftKey: true, ctrlKey: true })).toBeNull();
  });
  it('leaves other keys and browser shortcuts alone', () => {
    expect(key('x')).toBeNull();
    expect(key('c', { ctrlKey: true })).toBeNull();
    expect(key('l', { metaKey: true })).toBeNull();
  });
});

describe('adjacentMarkerTime', () => {
  const times = [6.25, 1.5, 3, 3];
  it('finds the next comment after the playhead and the one before it', () => {
    expect(adjacentMarkerTime(times, 0, 1)).toBe(1.5);
    expect(adjacentMarkerTime(times, 2, 1)).toBe(3);
    expect(adjacentMarkerTime(times, 5, -1)).toBe(3);
  });
  it('moves on from a comment the playhead is on (within half a frame)', () => {
    expect(adjacentMarkerTime(times, 3.01, 1, 1 / 24)).toBe(6.25);
    expect(adjacentMarkerTime(times, 2.99, -1, 1 / 24)).toBe(1.5);
  });
  it('is null past the last comment, before the first, and without comments', () => {
    expect(adjacentMarkerTime(times, 6.25, 1)).toBeNull();
    expect(adjacentMarkerTime(times, 1.5, -1)).toBeNull();
    expect(adjacentMarkerTime([], 3, 1)).toBeNull();
  });
});
