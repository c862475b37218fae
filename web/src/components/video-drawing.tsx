import { useEffect, useRef, useState, type PointerEvent as ReactPointerEvent } from 'react';
import type { DrawnShape } from '@/types/request';

/** Most points a pen stroke keeps (the rules allow 200 x, y pairs). */
export const MAX_STROKE_POINTS = 200;

/** Most shapes one comment's drawing holds (the rules allow 20). */
export const MAX_SHAPES = 20;

/** The colours a drawing can use: yellow, red, cyan, white. */
export const DRAW_COLORS = [
  { value: '#facc15', name: 'Yellow' },
  { value: '#ef4444', name: 'Red' },
  { value: '#22d3ee', name: 'Cyan' },
  { value: '#ffffff', name: 'White' },
] as const;

/** How long (s) a drawing on a moment stays shown after that moment, so it is seen while playing. */
export const DRAWING_HOLD = 1;

/** A drawing attached to a moment or a range of the video. */
export interface VideoAnnotation {
  id: string;
  time: number;
  /** The out point of a range comment; null for a moment. */
  end: number | null;
  shapes: DrawnShape[];
  /** Names it for assistive technology: "Drawing by Maya Chen at 0:03". */
  label: string;
}

/**
 * Whether a drawing shows at `now`: throughout its range, or for a moment
 * from half a frame before it to DRAWING_HOLD seconds after.
 */
export function annotationVisible(
  a: Pick<VideoAnnotation, 'time' | 'end'>,
  now: number,
  frame = 1 / 24,
): boolean {
  const from = a.time - frame / 2;
  const to = a.end ?? a.time + DRAWING_HOLD;
  return now >= from && now < to + (a.end === null ? 0 : frame / 2);
}

const clamp01 = (n: number) => Math.min(1, Math.max(0, n));
const round = (n: number) => Math.round(clamp01(n) * 10000) / 10000;

/**
 * Adds a point to a pen stroke (x, y, x, y, …) unless it is within `minStep`
 * of the last one or the stroke already holds MAX_STROKE_POINTS points.
 */
export function extendStroke(points: number[], x: number, y: number, minStep = 0.004): number[] {
  if (points.length >= MAX_STROKE_POINTS * 2) return points;
  const lx = points[points.length - 2];
  const ly = points[points.length - 1];
  if (lx !== undefined && ly !== undefined && Math.hypot(x - lx, y - ly) < minStep) return points;
  return [...points, round(x), round(y)];
}

/** A finished shape, or null when it is too small to mean anything (a click). */
export function finishShape(shape: DrawnShape): DrawnShape | null {
  const [x0 = 0, y0 = 0, x1 = 0, y1 = 0] = shape.points;
  if (shape.kind === 'pen') {
    if (shape.points.length >= 4) return shape;
    return null;
  }
  if (Math.hypot(x1 - x0, y1 - y0) < 0.01) return null;
  return { ...shape, points: [round(x0), round(y0), round(x1), round(y1)] };
}

function Shape({ shape, w, h }: { shape: DrawnShape; w: number; h: number }) {
  const p = shape.points.map((n, i) => n * (i % 2 === 0 ? w : h));
  const [x0 = 0, y0 = 0, x1 = 0, y1 = 0] = p;
  const line = {
    stroke: shape.color,
    strokeWidth: 3,
    fill: 'none',
    strokeLinecap: 'round' as const,
    strokeLinejoin: 'round' as const,
  };
  switch (shape.kind) {
    case 'pen': {
      const pairs: string[] = [];
      for (let i = 0; i + 1 < p.length; i += 2) pairs.push(`${p[i]},${p[i + 1]}`);
      return <polyline points={pairs.join(' ')} {...line} />;
    }
    case 'rect':
      return (
        <rect
          x={Math.min(x0, x1)}
          y={Math.min(y0, y1)}
          width={Math.abs(x1 - x0)}
          height={Math.abs(y1 - y0)}
          {...line}
        />
      );
    case 'ellipse':
      return (
        <ellipse
          cx={(x0 + x1) / 2}
          cy={(y0 + y1) / 2}
          rx={Math.abs(x1 - x0) / 2}
          ry={Math.abs(y1 - y0) / 2}
          {...line}
        />
      );
    case 'arrow': {
      const angle = Math.atan2(y1 - y0, x1 - x0);
      const head = Math.min(18, Math.hypot(x1 - x0, y1 - y0) / 2);
      const wing = (a: number) => `${x1 - head * Math.cos(angle + a)},${y1 - head * Math.sin(angle + a)}`;
      return (
        <g {...line}>
          <line x1={x0} y1={y0} x2={x1} y2={y1} />
          <polyline points={`${wing(0.5)} ${x1},${y1} ${wing(-0.5)}`} />
        </g>
      );
    }
  }
}

/** Shapes in 0..1 frame coordinates drawn over a box of w × h pixels. */
export function ShapesLayer({ shapes, w, h }: { shapes: DrawnShape[]; w: number; h: number }) {
  return (
    <>
      {shapes.map((s, i) => (
        <Shape key={i} shape={s} w={w} h={h} />
      ))}
    </>
  );
}

/** The pixel size of an element, kept up to date as it resizes. */
export function useBoxSize<E extends Element>() {
  const ref = useRef<E>(null);
  const [size, setSize] = useState({ w: 0, h: 0 });
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    const measure = () => setSize({ w: el.clientWidth, h: el.clientHeight });
    measure();
    if (typeof ResizeObserver === 'undefined') return;
    const watch = new ResizeObserver(measure);
    watch.observe(el);
    return () => watch.disconnect();
  }, []);
  return [ref, size] as const;
}

/**
 * Where the picture sits inside a video element of box size w × h (object-fit:
 * contain), as CSS percentages of the box, so drawings map to the frame
 * itself and not to the letterbox around it.
 */
export function frameRect(videoW: number, videoH: number, w: number, h: number) {
  if (!(videoW > 0 && videoH > 0 && w > 0 && h > 0)) return { left: 0, top: 0, width: 100, height: 100 };
  const video = videoW / videoH;
  const box = w / h;
  if (video > box) {
    const height = (box / video) * 100;
    return { left: 0, top: (100 - height) / 2, width: 100, height };
  }
  const width = (video / box) * 100;
  return { left: (100 - width) / 2, top: 0, width, height: 100 };
}

/**
 * The drawing surface over the frame: drags draw the chosen shape (a pen
 * stroke keeps at most MAX_STROKE_POINTS points) in the chosen colour;
 * onAdd receives each finished shape.
 */
export function DrawingSurface({
  tool,
  color,
  shapes,
  onAdd,
}: {
  tool: DrawnShape['kind'];
  color: string;
  shapes: DrawnShape[];
  onAdd: (shape: DrawnShape) => void;
}) {
  const [ref, { w, h }] = useBoxSize<SVGSVGElement>();
  const [current, setCurrent] = useState<DrawnShape | null>(null);
  const full = shapes.length >= MAX_SHAPES;
  const at = (e: ReactPointerEvent) => {
    const box = e.currentTarget.getBoundingClientRect();
    return [
      clamp01((e.clientX - box.left) / box.width),
      clamp01((e.clientY - box.top) / box.height),
    ] as const;
  };
  return (
    <svg
      ref={ref}
      role="img"
      aria-label={full ? `Your drawing (${MAX_SHAPES} shapes, the most one comment holds)` : 'Your drawing'}
      className="absolute inset-0 size-full cursor-crosshair touch-none"
      onPointerDown={(e) => {
        if (full || e.button !== 0) return;
        e.currentTarget.setPointerCapture(e.pointerId);
        const [x, y] = at(e);
        setCurrent({ kind: tool, color, points: [round(x), round(y), round(x), round(y)] });
      }}
      onPointerMove={(e) => {
        if (!current) return;
        const [x, y] = at(e);
        setCurrent(
          current.kind === 'pen'
            ? { ...current, points: extendStroke(current.points, x, y) }
            : { ...current, points: [current.points[0] ?? x, current.points[1] ?? y, round(x), round(y)] },
        );
      }}
      onPointerUp={() => {
        const done = current && finishShape(current);
        setCurrent(null);
        if (done) onAdd(done);
      }}
      onPointerCancel={() => setCurrent(null)}
    >
      <ShapesLayer shapes={current ? [...shapes, current] : shapes} w={w} h={h} />
    </svg>
  );
}

/** Drawings shown over the frame (not interactive). */
export function AnnotationsLayer({ annotations }: { annotations: VideoAnnotation[] }) {
  const [ref, { w, h }] = useBoxSize<HTMLDivElement>();
  return (
    <div ref={ref} className="pointer-events-none absolute inset-0">
      {annotations.map((a) => (
        <svg key={a.id} role="img" aria-label={a.label} className="absolute inset-0 size-full">
          <ShapesLayer shapes={a.shapes} w={w} h={h} />
        </svg>
      ))}
    </div>
  );
}
