import { useState } from 'react';
import { messageOf } from '../api/client';
import { Button } from '@/components/ui/button';
import { Badge } from '../ui/controls';
import { runPipeline } from './api';
import { parsePipeline } from './pipeline-syntax';
import { preview, type Fields } from './values';

const example = 'where rating >= 4\nsort rating desc\nlimit 10';

/**
 * A pipeline typed stage by stage over the collection (Enterprise
 * databases serve pipelines): each stage's output count, then the rows.
 */
export function PipelineForm({ db, collectionPath }: { db: string; collectionPath: string }) {
  const [text, setText] = useState(example);
  const [error, setError] = useState('');
  const [running, setRunning] = useState(false);
  const [result, setResult] = useState<{ labels: string[]; counts: number[]; rows: Fields[] } | null>(null);
  return (
    <form
      aria-label="Pipeline"
      className="space-y-2 border-b border-zinc-800 bg-zinc-950/40 p-3"
      onSubmit={async (e) => {
        e.preventDefault();
        setRunning(true);
        try {
          const stages = parsePipeline(text);
          const lines = text
            .split('\n')
            .map((l) => l.trim())
            .filter((l) => l && !l.startsWith('#'));
          const { counts, rows } = await runPipeline(db, collectionPath, stages);
          setResult({ labels: [`collection ${collectionPath}`, ...lines], counts, rows });
          setError('');
        } catch (err) {
          setResult(null);
          setError(messageOf(err));
        } finally {
          setRunning(false);
        }
      }}
    >
      <label className="block text-[11px] text-zinc-400" htmlFor="pipeline-stages">
        Stages, one a line: where, sort, limit, offset, select, remove, distinct, aggregate … by
      </label>
      <textarea
        id="pipeline-stages"
        value={text}
        onChange={(e) => setText(e.target.value)}
        rows={4}
        spellCheck={false}
        className="w-full rounded-md border border-zinc-700 bg-zinc-900 p-2 font-mono text-xs text-zinc-100 focus:border-brand-400 focus:outline-none"
      />
      <div className="flex justify-end">
        <Button size="sm" variant="primary" type="submit" disabled={running}>
          {running ? 'Running…' : 'Run pipeline'}
        </Button>
      </div>
      {error && (
        <p role="alert" className="text-xs text-red-300">
          {error}
        </p>
      )}
      {result && (
        <>
          <ol aria-label="Stage outputs" className="space-y-1">
            {result.labels.map((label, i) => (
              <li key={i} className="flex items-center justify-between gap-2 text-xs">
                <span className="min-w-0 truncate font-mono text-zinc-300">{label}</span>
                <Badge className="tabular">{result.counts[i]?.toLocaleString()}</Badge>
              </li>
            ))}
          </ol>
          <ul aria-label="Pipeline results" className="max-h-64 space-y-1 overflow-y-auto">
            {result.rows.slice(0, 50).map((row, i) => (
              <li key={i} className="truncate font-mono text-[11px] text-zinc-400">
                {Object.entries(row)
                  .sort(([a], [b]) => a.localeCompare(b))
                  .map(([k, v]) => `${k}: ${preview(v)}`)
                  .join(' · ') || '{}'}
              </li>
            ))}
          </ul>
        </>
      )}
    </form>
  );
}
