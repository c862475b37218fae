import { formatTimecode, formatVideoTime } from './video-time';

describe('formatTimecode', () => {
  const clock = { mode: 'clock' as const, fps: 24 };
  const frames = { mode: 'frames' as const, fps: 24 };
  it('reads a whole second as the player does, and a moment between seconds to the hundredth', () => {
    expect(formatTimecode(3, clock)).toBe(formatVideoTime(3));
    expect(formatTimecode(1.25, clock)).toBe('0:01.25');
    expect(formatTimecode(4.5, clock)).toBe('0:04.50');
    expect(formatTimecode(3725.07, clock)).toBe('1:02:05.07');
  });
  it('tells two moments a frame apart apart', () => {
    expect(formatTimecode(1, clock)).not.toBe(formatTimecode(1 + 1 / 24, clock));
    expect(formatTimecode(1, frames)).toBe('00:00:01:00');
    expect(formatTimecode(1 + 1 / 24, frames)).toBe('00:00:01:01');
    expect(formatTimecode(1.25, frames)).toBe('00:00:01:06');
    expect(formatTimecode(61.5, { mode: 'frames', fps: 30 })).toBe('00:01:01:15');
  });
});

describe('formatTimecode at a position the player rounded', () => {
  it('counts a frame whose time reads a hair early (2.041666 s at 24 fps) as that frame', () => {
    expect(formatTimecode(2.041666, { mode: 'frames', fps: 24 })).toBe('00:00:02:01');
  });
});
