import { Plus, X } from 'lucide-react';
import { useState } from 'react';
import { messageOf } from '../api/client';
import { Button, IconButton } from '@/components/ui/button';
import { Dialog } from '@/components/ui/dialog';
import { Input } from '@/components/ui/input';
import { DraftInput, TypeSelect } from './value-editor';
import {
  fromDraft,
  member,
  retype,
  serverTimePaths,
  toDraft,
  valueTypes,
  type Draft,
  type Member,
} from './values';
import { autoId, createDoc } from './api';

/**
 * "Add document" as one dialog: the id (blank for an automatic one), then
 * rows of field name, type and value, each value in the typed editor the
 * field editor uses; Save creates the document with its fields in one write.
 */
export function AddDocumentDialog({
  db,
  collectionPath,
  onClose,
  onCreated,
}: {
  db: string;
  collectionPath: string;
  onClose: () => void;
  onCreated: (id: string) => void;
}) {
  const [id, setId] = useState('');
  // The fields are the members of one map draft: the same checks (empty or repeated names) apply.
  const [fields, setFields] = useState<Member[]>(() => [member('', toDraft(undefined))]);
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const setRow = (rowId: number, f: (m: Member) => Member) =>
    setFields((ms) => ms.map((m) => (m.id === rowId ? f(m) : m)));
  const save = async () => {
    const docId = id.trim() || autoId();
    const draft: Draft = { type: 'map', text: '', members: fields.map((m) => ({ ...m, key: m.key.trim() })) };
    let value;
    try {
      if (docId.includes('/')) throw new Error('A document id cannot contain “/”.');
      if (docId === '.' || docId === '..' || /^__.*__$/.test(docId))
        throw new Error(`“${docId}” cannot be a document id.`);
      if (draft.members.some((m) => !m.key))
        throw new Error('A field has no name: name it or remove its row.');
      value = fromDraft(draft, db);
    } catch (err) {
      setError(messageOf(err));
      return;
    }
    setError('');
    setBusy(true);
    try {
      const values = 'mapValue' in value ? (value.mapValue.fields ?? {}) : {};
      await createDoc(db, `${collectionPath}/${docId}`, values, serverTimePaths(draft));
      onCreated(docId);
    } catch (err) {
      setError(messageOf(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <Dialog
      open
      onClose={onClose}
      title={`Add a document to ${collectionPath.split('/').at(-1)}`}
      className="sm:w-[min(40rem,calc(100vw-2rem))]"
    >
      <form
        aria-label="New document"
        className="space-y-4"
        onSubmit={(e) => {
          e.preventDefault();
          void save();
        }}
      >
        <label className="block space-y-1">
          <span className="block text-xs font-medium text-zinc-400">Document id</span>
          <Input
            value={id}
            onChange={(e) => setId(e.target.value)}
            placeholder="Blank for an automatic id"
            className="h-8 font-mono text-xs"
            autoFocus
            spellCheck={false}
            autoCapitalize="off"
          />
        </label>
        <fieldset className="space-y-2">
          <legend className="mb-1 text-xs font-medium text-zinc-400">Fields</legend>
          {fields.length === 0 && <p className="text-xs text-zinc-400">No fields: an empty document.</p>}
          {fields.map((m, i) => {
            const label = m.key.trim() || `field ${i + 1}`;
            return (
              <div
                key={m.id}
                role="group"
                aria-label={`Field ${i + 1}`}
                className="space-y-1.5 rounded-lg border border-zinc-800 bg-zinc-950/40 p-2"
              >
                <div className="flex items-center gap-1.5">
                  <Input
                    aria-label={`Name of field ${i + 1}`}
                    placeholder="field"
                    value={m.key}
                    onChange={(e) => setRow(m.id, (x) => ({ ...x, key: e.target.value }))}
                    className="h-8 min-w-0 flex-1 font-mono text-xs"
                    spellCheck={false}
                    autoCapitalize="off"
                  />
                  <TypeSelect
                    label={`Type of field ${i + 1}`}
                    types={valueTypes}
                    value={m.draft.type}
                    onChange={(t) => setRow(m.id, (x) => ({ ...x, draft: retype(x.draft, t, db) }))}
                  />
                  <IconButton
                    label={`Remove field ${i + 1}`}
                    className="hover:text-red-300"
                    onClick={() => setFields((ms) => ms.filter((x) => x.id !== m.id))}
                  >
                    <X className="size-3.5" />
                  </IconButton>
                </div>
                <DraftInput
                  db={db}
                  path={label}
                  label={`Value of field ${i + 1}`}
                  draft={m.draft}
                  onChange={(f) => setRow(m.id, (x) => ({ ...x, draft: f(x.draft) }))}
                />
              </div>
            );
          })}
          <Button
            size="sm"
            variant="ghost"
            icon={<Plus className="size-3.5" />}
            onClick={() => setFields((ms) => [...ms, member('', toDraft(undefined))])}
          >
            Add a field
          </Button>
        </fieldset>
        {error && (
          <p
            role="alert"
            className="rounded-lg border border-red-900/60 bg-red-950/40 px-3 py-2 text-xs text-red-200"
          >
            {error}
          </p>
        )}
        <div className="flex flex-col-reverse gap-2 sm:flex-row sm:justify-end">
          <Button onClick={onClose}>Cancel</Button>
          <Button variant="primary" type="submit" disabled={busy}>
            {busy ? 'Saving…' : 'Save'}
          </Button>
        </div>
      </form>
    </Dialog>
  );
}
