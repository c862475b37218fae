/** Shapes of the rules endpoints (docs/admin-api.md: Security rules, Request log). */

import { ExactInt } from '../ui/json';

/** A rules value as coverage and the request log report it. */
export type RulesValue = Record<string, unknown>;

export type Range = { line: number; column: number; endLine: number; endColumn: number };

/** A rules decision: the allow that granted it (line 0: none), every allow tried, every expression evaluated. */
export type Decision = {
  file?: string;
  source?: string;
  line: number;
  allows?: { line: number; outcome: 'allow' | 'deny' | 'error'; message?: string }[];
  expressions?: { range: Range; value: RulesValue }[];
};

export type Entry = {
  id: number;
  time: string;
  service: 'firestore' | 'database' | 'storage' | 'auth';
  method: string;
  path?: string;
  project?: string;
  database?: string;
  bucket?: string;
  outcome: 'allowed' | 'denied' | 'error';
  status: number;
  message?: string;
  caller?: { uid?: string; claims?: Record<string, unknown> } | null;
  request?: unknown;
  resource?: unknown;
  rules?: Decision;
  /** A call forwarded to the upstream of a service loupe passes through. */
  passThrough?: boolean;
  /** A stream still open; its entry is sent again, with ended, when it ends. */
  open?: boolean;
  ended?: string;
};

export type CoverageNode = {
  sourcePosition: {
    fileName?: string;
    line: number;
    column: number;
    currentOffset: number;
    endOffset: number;
  };
  values?: { value: RulesValue; count: number }[];
  children?: CoverageNode[];
};

export type Coverage = { rules: { files: { name: string; content: string }[] }; report?: CoverageNode[] };

/** A short text for a rules value. */
export function showValue(v: RulesValue | undefined): string {
  if (!v) return '';
  const [k, x] = Object.entries(v)[0] ?? ['', undefined];
  switch (k) {
    case 'boolValue':
      return String(x);
    case 'intValue':
    case 'floatValue':
      return String(x);
    case 'stringValue':
      return JSON.stringify(x);
    case 'nullValue':
      return 'null';
    case 'undefined':
      return `error: ${(x as { causeMessage?: string })?.causeMessage ?? 'undefined'}`;
    case 'pathValue':
      return String(x);
    case 'listValue':
    case 'setValue':
      return `[${((x as { values?: RulesValue[] })?.values ?? []).map(showValue).join(', ')}]`;
    case 'mapValue':
      return `{${Object.entries((x as { fields?: Record<string, RulesValue> })?.fields ?? {})
        .map(([f, y]) => `${f}: ${showValue(y)}`)
        .join(', ')}}`;
    default:
      return JSON.stringify(x);
  }
}

/** The tone of a rules value: true green, false red, errors amber. */
export function valueTone(v: RulesValue | undefined): 'green' | 'red' | 'amber' | 'zinc' {
  if (!v) return 'zinc';
  if ('boolValue' in v) return v.boolValue ? 'green' : 'red';
  if ('undefined' in v) return 'amber';
  return 'zinc';
}

/**
 * Plain JSON for typed values ({stringValue: "a"} → "a"), recursively, with
 * integers as ExactInt (show them with jsonText); other JSON is left as it is.
 */
export function plain(x: unknown): unknown {
  if (Array.isArray(x)) return x.map(plain);
  if (!x || typeof x !== 'object') return x;
  const entries = Object.entries(x as Record<string, unknown>);
  if (entries.length === 1) {
    const [k, v] = entries[0] as [string, unknown];
    switch (k) {
      case 'stringValue':
      case 'boolValue':
      case 'booleanValue':
      case 'floatValue':
      case 'doubleValue':
      case 'timestampValue':
      case 'pathValue':
      case 'referenceValue':
      case 'bytesValue':
      case 'durationValue':
        return v;
      case 'intValue':
      case 'integerValue':
        return new ExactInt(String(v));
      case 'nullValue':
        return null;
      case 'listValue':
      case 'setValue':
      case 'arrayValue':
        return ((v as { values?: unknown[] })?.values ?? []).map(plain);
      case 'mapValue':
        return plain((v as { fields?: unknown })?.fields ?? {});
      case 'latlngValue':
      case 'geoPointValue':
        return v;
    }
  }
  return Object.fromEntries(entries.map(([k, v]) => [k, plain(v)]));
}
