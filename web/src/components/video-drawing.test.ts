import { MAX_STROKE_POINTS, annotationVisible, extendStroke, finishShape, frameRect } from './video-drawing';

describe('annotationVisible', () => {
  it('shows a moment from its frame for a second', () => {
    const a = { time: 2, end: null };
    expect([1.9, 2, 2.9, 3.1].map((t) => annotationVisible(a, t))).toEqual([false, true, true, false]);
  });
  it('shows a range from its in point to its out point', () => {
    const a = { time: 1, end: 4 };
    expect([0.5, 1, 3.99, 4, 4.5].map((t) => annotationVisible(a, t))).toEqual([
      false,
      true,
      true,
      true,
      false,
    ]);
  });
});

describe('extendStroke', () => {
  it('skips points too close to the last and rounds to 4 decimals', () => {
    expect(extendStroke(extendStroke([], 0.123456, 0.5), 0.1235, 0.5)).toEqual([0.1235, 0.5]);
  });
  it('keeps at most MAX_STROKE_POINTS points, inside the frame', () => {
    let points: number[] = [];
    for (let i = 0; i < 500; i++) points = extendStroke(points, i / 100, 1.5);
    expect(points).toHaveLength(MAX_STROKE_POINTS * 2);
    expect(points.every((n) => n >= 0 && n <= 1)).toBe(true);
  });
});

describe('finishShape', () => {
  it('drops a click that drew nothing', () => {
    expect(finishShape({ kind: 'rect', color: '#facc15', points: [0.5, 0.5, 0.5, 0.5] })).toBeNull();
    expect(finishShape({ kind: 'pen', color: '#facc15', points: [0.5, 0.5] })).toBeNull();
  });
});

describe('frameRect', () => {
  it('letterboxes a 4:3 clip in a 16:9 box', () => {
    expect(frameRect(640, 480, 1600, 900)).toEqual({ left: 12.5, top: 0, width: 75, height: 100 });
  });
  it('fills the box when the shapes match', () => {
    expect(frameRect(1280, 720, 640, 360)).toEqual({ left: 0, top: 0, width: 100, height: 100 });
  });
});
