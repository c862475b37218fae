/** JSON text that keeps 64-bit integers exact, for values shown to people. */

/** An integer known by its decimal text (an int64 a JavaScript number would round). */
export class ExactInt {
  constructor(readonly text: string) {}
}

/**
 * value as indented JSON text, like JSON.stringify(value, null, indent),
 * with each ExactInt written as the bare number it holds.
 */
export function jsonText(value: unknown, indent = 2): string {
  const pad = (depth: number) => ' '.repeat(indent * depth);
  const write = (v: unknown, depth: number): string => {
    if (v instanceof ExactInt) return v.text;
    if (Array.isArray(v)) {
      if (!v.length) return '[]';
      const items = v.map((x) => pad(depth + 1) + (x === undefined ? 'null' : write(x, depth + 1)));
      return `[\n${items.join(',\n')}\n${pad(depth)}]`;
    }
    if (v && typeof v === 'object' && !(v instanceof Date)) {
      const entries = Object.entries(v as Record<string, unknown>).filter(([, x]) => x !== undefined);
      if (!entries.length) return '{}';
      const items = entries.map(([k, x]) => `${pad(depth + 1)}${JSON.stringify(k)}: ${write(x, depth + 1)}`);
      return `{\n${items.join(',\n')}\n${pad(depth)}}`;
    }
    return JSON.stringify(v) ?? 'null';
  };
  return write(value, 0);
}
