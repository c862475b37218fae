import { ExternalLink, Inbox, Search, Trash2, UserPlus, Users } from 'lucide-react';
import { defaultRangeExtractor, useVirtualizer, type Range } from '@tanstack/react-virtual';
import { memo, useCallback, useEffect, useRef, useState, type KeyboardEvent } from 'react';
import { cn } from '@/lib/cn';
import { api, messageOf } from '../api/client';
import { useChangeCounter, usePolled } from '../api/live';
import { useOverview } from '../api/overview';
import { Button, IconButton } from '@/components/ui/button';
import { Field } from '@/components/ui/field';
import { Input, Textarea } from '@/components/ui/input';
import { Badge, Empty, ErrorNote, Panel, TabHeader } from '../ui/controls';
import { CopyButton } from '../ui/copy-button';
import { useConfirmed } from '../ui/confirm';
import { ago } from '../ui/format';

/** A user as the Identity Toolkit API returns it. */
type User = {
  localId: string;
  email?: string;
  displayName?: string;
  phoneNumber?: string;
  disabled?: boolean;
  emailVerified?: boolean;
  customAttributes?: string;
  createdAt?: string;
  lastLoginAt?: string;
  providerUserInfo?: { providerId: string }[];
};

type Mail = { email: string; requestType: string; oobCode: string; oobLink: string };

const idt = '/identitytoolkit.googleapis.com/v1/projects';

const providerNames: Record<string, string> = {
  password: 'E-mail',
  'google.com': 'Google',
  'github.com': 'GitHub',
  'apple.com': 'Apple',
  'facebook.com': 'Facebook',
  phone: 'Phone',
};

/** A page of GET /emulator/v1/projects/{p}/users (docs/admin-api.md). */
type UserPage = {
  users: User[];
  nextPageToken?: string;
  total: number;
  matched: number;
  providers: Record<string, number>;
  version: number;
};

const pageSize = 100;

/** A page of the users matching search, after the uid after. */
function getPage(projectId: string, search: string, after: string, size: number) {
  const q = new URLSearchParams({ pageSize: String(size) });
  if (search) q.set('q', search);
  if (after) q.set('pageToken', after);
  return api<UserPage>(`/emulator/v1/projects/${projectId}/users?${q}`);
}

/**
 * The users matching search, a page at a time from the server: more() adds
 * the next page by cursor; when Auth's change counter moves, the pages
 * loaded are read again in one request.
 */
function useUserPages(projectId: string, search: string, version: number | undefined) {
  const [list, setList] = useState<(UserPage & { search: string }) | undefined>(undefined);
  const [error, setError] = useState('');
  const [loading, setLoading] = useState(false);
  // The newest request wins: an older answer arriving late is dropped.
  const seq = useRef(0);
  const loaded = useRef(0);
  const fetchPage = useCallback(
    (after: string, size: number, append: boolean) => {
      const n = ++seq.current;
      return getPage(projectId, search, after, size).then(
        (page) => {
          if (n !== seq.current) return;
          setError('');
          setList((old) => {
            const users = append && old ? [...old.users, ...page.users] : unchanged(old?.users, page.users);
            loaded.current = users.length;
            return { ...page, users, search };
          });
        },
        (e: unknown) => {
          if (n === seq.current) setError(messageOf(e));
        },
      );
    },
    [projectId, search],
  );
  // A new search starts from its first page.
  useEffect(() => {
    loaded.current = 0;
    void fetchPage('', pageSize, false);
  }, [fetchPage]);
  // A change re-reads the window loaded so far.
  const seen = useRef(version);
  useEffect(() => {
    if (version === undefined || seen.current === undefined || version === seen.current) {
      seen.current = version;
      return;
    }
    seen.current = version;
    void fetchPage('', Math.min(Math.max(loaded.current, pageSize), 1000), false);
  }, [version, fetchPage]);
  const current = list?.search === search ? list : undefined;
  return {
    page: current,
    error,
    loading,
    more: async () => {
      if (!current?.nextPageToken) return;
      setLoading(true);
      await fetchPage(current.nextPageToken, pageSize, true);
      setLoading(false);
    },
  };
}

/**
 * next, with each user that did not change since old kept as the same
 * object, so that a live change re-renders only the rows it changed.
 */
function unchanged(old: User[] | undefined, next: User[]): User[] {
  if (!old?.length) return next;
  const byId = new Map(old.map((u) => [u.localId, u]));
  return next.map((u) => {
    const was = byId.get(u.localId);
    return was && JSON.stringify(was) === JSON.stringify(u) ? was : u;
  });
}

/** Users (search, add, edit, delete), the providers they use and the mail Auth sent. */
export function AuthTab() {
  const { projectId } = useOverview();
  const version = useChangeCounter(`/emulator/v1/projects/${projectId}/users:changes`);
  const [search, setSearch] = useState('');
  const [query, setQuery] = useState('');
  // Search once typing pauses.
  useEffect(() => {
    const t = setTimeout(() => setQuery(search.trim()), 200);
    return () => clearTimeout(t);
  }, [search]);
  const users = useUserPages(projectId, query, version);
  const mail = usePolled(
    () => api<{ oobCodes: Mail[] }>(`/emulator/v1/projects/${projectId}/oobCodes`).then((r) => r.oobCodes),
    0,
    [version],
  );
  const [editing, setEditing] = useState<User | 'new' | null>(null);
  const confirmed = useConfirmed();
  const deleteUser = useCallback(
    (u: User) =>
      void confirmed(
        {
          title: `Delete ${u.email ?? u.localId}?`,
          action: 'Delete user',
          danger: true,
        },
        async () => {
          await api(`${idt}/${projectId}/accounts:delete`, {
            method: 'POST',
            json: { localId: u.localId },
          });
        },
        'Could not delete',
      ),
    [confirmed, projectId],
  );
  const q = query;
  const shown = users.page?.users ?? [];
  const providers = Object.entries(users.page?.providers ?? {}).filter(([, n]) => n > 0);
  const total = users.page?.total;

  return (
    <div className="space-y-4">
      <TabHeader
        title="Authentication"
        description={
          total === undefined
            ? projectId
            : `${total.toLocaleString('en-US')} ${total === 1 ? 'user' : 'users'} in ${projectId}`
        }
        actions={
          <>
            <Button
              size="sm"
              variant="primary"
              icon={<UserPlus className="size-3.5" />}
              onClick={() => setEditing('new')}
            >
              Add user
            </Button>
            <Button
              size="sm"
              variant="danger"
              icon={<Trash2 className="size-3.5" />}
              onClick={async () => {
                await confirmed(
                  {
                    title: 'Delete every user?',
                    body: `All accounts of ${projectId} are deleted.`,
                    action: 'Delete all',
                    danger: true,
                  },
                  async () => {
                    await api(`/emulator/v1/projects/${projectId}/accounts`, { method: 'DELETE' });
                  },
                  'Could not delete',
                );
              }}
            >
              Delete all
            </Button>
          </>
        }
      />
      {users.error && <ErrorNote>{users.error}</ErrorNote>}
      <div className="grid grid-cols-1 gap-4 xl:grid-cols-[minmax(0,1fr)_22rem]">
        <div className="space-y-4">
          <Panel
            title={
              <div className="relative max-w-sm">
                <Search
                  className="pointer-events-none absolute top-2 left-2.5 size-3.5 text-zinc-400"
                  aria-hidden
                />
                <Input
                  aria-label="Search users"
                  placeholder="Search by e-mail, name, uid or phone"
                  value={search}
                  onChange={(e) => setSearch(e.target.value)}
                  className="h-7 pl-8 text-xs font-normal"
                />
              </div>
            }
          >
            {editing && (
              <UserForm
                key={editing === 'new' ? 'new' : editing.localId}
                projectId={projectId}
                user={editing === 'new' ? undefined : editing}
                onDone={() => setEditing(null)}
              />
            )}
            {users.page && shown.length === 0 && (
              <Empty icon={<Users className="size-6" />} title={q ? 'No user matches' : 'No users yet'}>
                {!q && 'Sign up in the app, or add a user here.'}
              </Empty>
            )}
            {/* Mounted with its rows, so the virtualizer measures a scroller that holds them and the first paint shows rows. */}
            {shown.length > 0 && (
              <UserList
                key={q}
                users={shown}
                matched={users.page?.matched ?? 0}
                selectedId={editing && editing !== 'new' ? editing.localId : undefined}
                onEdit={setEditing}
                onDelete={deleteUser}
              />
            )}
            {users.page && shown.length > 0 && (
              <div className="flex flex-wrap items-center gap-3 border-t border-zinc-800 px-3 py-2 text-xs text-zinc-400">
                <span className="tabular" role="status">
                  {shown.length.toLocaleString('en-US')} of {users.page.matched.toLocaleString('en-US')}{' '}
                  {q ? 'matching' : 'shown'}
                </span>
                {users.page.nextPageToken && (
                  <Button
                    size="sm"
                    className="ml-auto"
                    disabled={users.loading}
                    onClick={() => void users.more()}
                  >
                    Load {Math.min(pageSize, users.page.matched - shown.length)} more
                  </Button>
                )}
              </div>
            )}
          </Panel>
        </div>
        <div className="space-y-4">
          <Panel title="Providers in use">
            <div className="flex flex-wrap gap-2 p-3">
              {providers.length === 0 && <p className="text-xs text-zinc-400">No sign-in yet.</p>}
              {providers.map(([id, n]) => (
                <span
                  key={id}
                  className="flex items-center gap-1.5 rounded-lg border border-zinc-800 bg-zinc-950/50 px-2.5 py-1 text-xs"
                >
                  <span className="text-zinc-200">{providerNames[id] ?? id}</span>
                  <span className="tabular text-zinc-400">{n.toLocaleString('en-US')}</span>
                </span>
              ))}
            </div>
          </Panel>
          <Panel
            title={
              <span className="flex items-center gap-2">
                <Inbox className="size-4 text-zinc-400" /> Mail sent
              </span>
            }
          >
            {mail.data?.length === 0 && (
              <Empty title="No mail yet">
                Password resets, e-mail verifications and sign-in links appear here.
              </Empty>
            )}
            <ul className="divide-y divide-zinc-800/80" aria-label="Mail">
              {[...(mail.data ?? [])].reverse().map((m) => (
                <li key={m.oobCode} className="space-y-1 px-3 py-2.5">
                  <div className="flex items-center gap-2">
                    <Badge tone="brand">{mailKinds[m.requestType] ?? m.requestType}</Badge>
                    <span className="min-w-0 flex-1 truncate text-xs text-zinc-300">{m.email}</span>
                  </div>
                  <a
                    href={m.oobLink}
                    target="_blank"
                    rel="noreferrer"
                    className="flex items-center gap-1 text-xs text-brand-300 hover:text-brand-400"
                  >
                    Open the action link <ExternalLink className="size-3" aria-hidden />
                  </a>
                </li>
              ))}
            </ul>
          </Panel>
        </div>
      </div>
    </div>
  );
}

const mailKinds: Record<string, string> = {
  PASSWORD_RESET: 'password reset',
  VERIFY_EMAIL: 'verify e-mail',
  EMAIL_SIGNIN: 'sign-in link',
  VERIFY_AND_CHANGE_EMAIL: 'change e-mail',
};

/** A row's height before it is measured: two lines of text beside the avatar. */
const rowEstimate = 57;

/**
 * The users loaded so far, windowed: only the rows in view (and a few either
 * side) are in the DOM, so "Load more" costs the same at 3,000 rows as at 100.
 * Rows are measured once rendered, so heights stay right at every width. The
 * row holding focus stays rendered while scrolled away, and ↑/↓/Home/End move
 * between rows, scrolling as they go.
 */
function UserList({
  users,
  matched,
  selectedId,
  onEdit,
  onDelete,
}: {
  users: User[];
  matched: number;
  selectedId?: string;
  onEdit: (u: User) => void;
  onDelete: (u: User) => void;
}) {
  const scroller = useRef<HTMLDivElement>(null);
  // The index of the row holding focus, and the row (and which of its buttons) to focus next.
  const [active, setActive] = useState<number | null>(null);
  const pending = useRef<{ index: number; col: string } | null>(null);
  const rangeExtractor = useCallback(
    (range: Range) => {
      const rows = defaultRangeExtractor(range);
      if (active === null || active >= range.count || rows.includes(active)) return rows;
      return [...rows, active].sort((a, b) => a - b);
    },
    [active],
  );
  const getItemKey = useCallback((i: number) => users[i]?.localId ?? i, [users]);
  // The rows take the virtualizer's positions as props, so they follow its state.
  // eslint-disable-next-line react-hooks/incompatible-library
  const virtualizer = useVirtualizer({
    count: users.length,
    getScrollElement: () => scroller.current,
    estimateSize: () => rowEstimate,
    overscan: 6,
    getItemKey,
    rangeExtractor,
  });
  useEffect(() => {
    const p = pending.current;
    if (!p) return;
    const el = scroller.current?.querySelector<HTMLElement>(
      `li[data-index="${p.index}"] [data-col="${p.col}"]`,
    );
    if (!el) return;
    pending.current = null;
    // Scrolls the page too if the row is below the fold.
    el.focus();
  });
  const move = (e: KeyboardEvent<HTMLUListElement>) => {
    const from = e.target instanceof HTMLElement ? e.target : null;
    const row = from?.closest<HTMLElement>('li[data-index]');
    if (!from || !row) return;
    const at = Number(row.dataset.index);
    const to = { ArrowDown: at + 1, ArrowUp: at - 1, Home: 0, End: users.length - 1 }[e.key];
    if (to === undefined) return;
    e.preventDefault();
    if (to < 0 || to >= users.length || to === at) return;
    pending.current = { index: to, col: from.dataset.col ?? 'open' };
    setActive(to);
    virtualizer.scrollToIndex(to, { align: 'auto' });
  };
  const rows = virtualizer.getVirtualItems();
  return (
    <div
      ref={scroller}
      className="max-h-[max(20rem,calc(100dvh-20rem))] overflow-y-auto lg:max-h-[max(20rem,calc(100dvh-17rem))]"
    >
      <ul
        aria-label="Users"
        className="relative"
        style={{ height: virtualizer.getTotalSize() }}
        onKeyDown={move}
        onFocus={(e) => {
          const row = e.target.closest<HTMLElement>('li[data-index]');
          if (row) setActive(Number(row.dataset.index));
        }}
        onBlur={(e) => {
          if (!e.currentTarget.contains(e.relatedTarget)) setActive(null);
        }}
      >
        {rows.map((r) => {
          const u = users[r.index];
          return (
            u && (
              <UserRow
                key={r.key}
                user={u}
                index={r.index}
                start={r.start}
                setSize={Math.max(matched, users.length)}
                selected={u.localId === selectedId}
                measure={virtualizer.measureElement}
                onEdit={onEdit}
                onDelete={onDelete}
              />
            )
          );
        })}
      </ul>
    </div>
  );
}

/** One user; re-renders only when its own props change. */
const UserRow = memo(function UserRow({
  user: u,
  index,
  start,
  setSize,
  selected,
  measure,
  onEdit,
  onDelete,
}: {
  user: User;
  index: number;
  start: number;
  setSize: number;
  selected: boolean;
  measure: (el: HTMLElement | null) => void;
  onEdit: (u: User) => void;
  onDelete: (u: User) => void;
}) {
  const claims = u.customAttributes && u.customAttributes !== '{}' ? u.customAttributes : '';
  return (
    <li
      ref={measure}
      data-index={index}
      aria-posinset={index + 1}
      aria-setsize={setSize}
      style={{ transform: `translateY(${start}px)` }}
      className={cn(
        'group absolute top-0 left-0 flex w-full items-center gap-3 px-3 py-2.5',
        index > 0 && 'border-t border-zinc-800/80',
        selected && 'bg-brand-500/10',
      )}
    >
      <span className="grid size-8 shrink-0 place-items-center rounded-full bg-zinc-800 text-xs font-semibold text-zinc-200 uppercase">
        {(u.displayName || u.email || '?').slice(0, 1)}
      </span>
      <button type="button" data-col="open" onClick={() => onEdit(u)} className="min-w-0 flex-1 text-left">
        <span className="flex items-center gap-2">
          <span className="truncate font-medium text-zinc-100">
            {u.displayName || u.email || u.phoneNumber || 'Anonymous'}
          </span>
          {u.disabled && <Badge tone="red">disabled</Badge>}
          {claims && (
            <Badge tone="amber" className="max-w-24 min-w-0 font-mono sm:max-w-48">
              <span className="truncate">{claims}</span>
            </Badge>
          )}
        </span>
        <span className="block truncate text-xs text-zinc-400">
          {u.displayName && u.email ? `${u.email} · ` : ''}
          {u.phoneNumber && (u.displayName || u.email) ? `${u.phoneNumber} · ` : ''}
          <span className="font-mono">{u.localId}</span>
        </span>
      </button>
      <span className="hidden shrink-0 gap-1 md:flex">
        {(u.providerUserInfo ?? []).map((p) => (
          <Badge key={p.providerId}>{providerNames[p.providerId] ?? p.providerId}</Badge>
        ))}
      </span>
      <span className="hidden w-36 shrink-0 text-right text-xs whitespace-nowrap text-zinc-400 lg:block">
        {u.lastLoginAt ? `signed in ${ago(u.lastLoginAt)}` : `created ${ago(u.createdAt)}`}
      </span>
      <IconButton
        label={`Delete ${u.email ?? u.localId}`}
        data-col="delete"
        onClick={() => onDelete(u)}
        className="hover:text-red-300"
      >
        <Trash2 className="size-4" />
      </IconButton>
    </li>
  );
});

/**
 * What Firebase Auth would refuse in the user form: an e-mail address that
 * is not one (INVALID_EMAIL), a password under 6 characters
 * (WEAK_PASSWORD); empty fields are left out of the request.
 */
function userFormErrors(email: string, password: string): { email?: string; password?: string } {
  const out: { email?: string; password?: string } = {};
  if (email && !/^[^\s@]+@[^\s@]+$/.test(email))
    out.email = 'Enter an e-mail address, such as ann@example.com.';
  if (password && password.length < 6) out.password = 'A password has at least 6 characters.';
  return out;
}

/** Adds a user, or edits one: name, e-mail, password, custom claims, disabled. */
function UserForm({ projectId, user, onDone }: { projectId: string; user?: User; onDone: () => void }) {
  const [displayName, setDisplayName] = useState(user?.displayName ?? '');
  const [email, setEmail] = useState(user?.email ?? '');
  const [password, setPassword] = useState('');
  const [claims, setClaims] = useState(
    user?.customAttributes ? JSON.stringify(JSON.parse(user.customAttributes), null, 2) : '',
  );
  const [disabled, setDisabled] = useState(!!user?.disabled);
  const [error, setError] = useState('');
  const [invalid, setInvalid] = useState<{ email?: string; password?: string }>({});
  const [busy, setBusy] = useState(false);
  const emailInput = useRef<HTMLInputElement>(null);
  const passwordInput = useRef<HTMLInputElement>(null);
  return (
    <form
      aria-label={user ? 'Edit user' : 'New user'}
      // The fields' errors show beside them, not in the browser's bubbles.
      noValidate
      className="grid gap-3 border-b border-zinc-800 bg-zinc-950/40 p-4 sm:grid-cols-2"
      onSubmit={async (e) => {
        e.preventDefault();
        setError('');
        const found = userFormErrors(email, password);
        setInvalid(found);
        if (found.email) emailInput.current?.focus();
        else if (found.password) passwordInput.current?.focus();
        if (found.email || found.password) return;
        let attrs: string | undefined;
        if (claims.trim()) {
          try {
            const parsed: unknown = JSON.parse(claims);
            if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error();
            attrs = JSON.stringify(parsed);
          } catch {
            setError('Custom claims are a JSON object, e.g. {"role": "admin"}.');
            return;
          }
        }
        setBusy(true);
        try {
          let localId = user?.localId;
          if (!localId) {
            const body: Record<string, unknown> = {
              displayName: displayName || undefined,
              email: email || undefined,
            };
            if (password) body.password = password;
            localId = (
              await api<{ localId: string }>(`${idt}/${projectId}/accounts`, { method: 'POST', json: body })
            ).localId;
          }
          const update: Record<string, unknown> = {
            localId,
            disableUser: disabled,
            customAttributes: attrs ?? '{}',
          };
          if (user) {
            if (displayName !== (user.displayName ?? '')) update.displayName = displayName;
            if (email !== (user.email ?? '')) update.email = email;
            if (password) update.password = password;
          }
          await api(`${idt}/${projectId}/accounts:update`, { method: 'POST', json: update });
          onDone();
        } catch (err) {
          setError(messageOf(err));
        } finally {
          setBusy(false);
        }
      }}
    >
      {user && (
        <p className="flex min-w-0 items-center gap-2 text-xs text-zinc-400 sm:col-span-2">
          uid
          <span className="min-w-0 font-mono text-zinc-200 [overflow-wrap:anywhere]">{user.localId}</span>
          <CopyButton text={user.localId} label="Copy uid" />
        </p>
      )}
      <Field size="sm" label="Display name">
        <Input value={displayName} onChange={(e) => setDisplayName(e.target.value)} autoFocus />
      </Field>
      <Field size="sm" label="E-mail" error={invalid.email}>
        <Input
          ref={emailInput}
          type="email"
          value={email}
          onChange={(e) => {
            setEmail(e.target.value);
            setInvalid((v) => ({ ...v, email: undefined }));
          }}
          autoComplete="off"
          aria-invalid={!!invalid.email}
        />
      </Field>
      <Field
        size="sm"
        label={user ? 'New password' : 'Password'}
        hint={user ? 'Leave empty to keep the current one.' : undefined}
        error={invalid.password}
      >
        <Input
          ref={passwordInput}
          type="password"
          value={password}
          onChange={(e) => {
            setPassword(e.target.value);
            setInvalid((v) => ({ ...v, password: undefined }));
          }}
          autoComplete="new-password"
          aria-invalid={!!invalid.password}
        />
      </Field>
      <label className="flex items-center gap-2 self-end pb-2 text-sm text-zinc-300">
        <input
          type="checkbox"
          checked={disabled}
          onChange={(e) => setDisabled(e.target.checked)}
          className="size-4 accent-brand-500"
        />
        Disabled
      </label>
      <div className="sm:col-span-2">
        <Field size="sm" label="Custom claims (JSON)">
          <Textarea
            className="font-mono text-xs leading-relaxed"
            rows={3}
            value={claims}
            onChange={(e) => setClaims(e.target.value)}
            placeholder='{"role": "mentor"}'
          />
        </Field>
      </div>
      {error && (
        <p className="text-xs text-red-300 sm:col-span-2" role="alert">
          {error}
        </p>
      )}
      <div className="flex justify-end gap-2 sm:col-span-2">
        <Button variant="ghost" onClick={onDone}>
          Cancel
        </Button>
        <Button variant="primary" type="submit" disabled={busy}>
          {user ? 'Save' : 'Add user'}
        </Button>
      </div>
    </form>
  );
}
