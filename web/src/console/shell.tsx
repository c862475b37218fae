import {
  Activity,
  Braces,
  Database,
  FolderOpen,
  Flame,
  Gauge,
  Logs,
  ListTree,
  MessageSquare,
  Radio,
  ScrollText,
  ShieldCheck,
  Users,
  Zap,
} from 'lucide-react';
import { useEffect, useRef, type ComponentType } from 'react';
import { NavLink, Navigate, Route, Routes, useLocation } from 'react-router';
import { cn } from '@/lib/cn';
import { OverviewContext, fetchOverview } from './api/overview';
import { usePolled } from './api/live';
import { ErrorNote } from './ui/controls';
import { OverviewTab } from './tabs/overview';
import { FirestoreTab } from './firestore/firestore-tab';
import { DatabaseTab } from './database/database-tab';
import { AuthTab } from './tabs/auth';
import { StorageTab } from './tabs/storage';
import { FunctionsTab } from './tabs/functions';
import { MessagingTab } from './tabs/messaging';
import { PubSubTab } from './tabs/pubsub';
import { RequestsTab } from './tabs/requests';
import { LogsTab } from './tabs/logs';
import { RulesTab } from './tabs/rules';
import { IndexesTab } from './tabs/indexes';

type Tab = {
  path: string;
  label: string;
  icon: ComponentType<{ className?: string }>;
  element: ComponentType;
};

export const tabs: Tab[] = [
  { path: 'overview', label: 'Overview', icon: Gauge, element: OverviewTab },
  { path: 'firestore', label: 'Firestore', icon: Database, element: FirestoreTab },
  { path: 'database', label: 'Realtime Database', icon: Flame, element: DatabaseTab },
  { path: 'requests', label: 'Requests', icon: Activity, element: RequestsTab },
  { path: 'logs', label: 'Logs', icon: Logs, element: LogsTab },
  { path: 'auth', label: 'Authentication', icon: Users, element: AuthTab },
  { path: 'storage', label: 'Storage', icon: FolderOpen, element: StorageTab },
  { path: 'functions', label: 'Functions', icon: Zap, element: FunctionsTab },
  { path: 'messaging', label: 'Messaging', icon: MessageSquare, element: MessagingTab },
  { path: 'pubsub', label: 'Pub/Sub', icon: Radio, element: PubSubTab },
  { path: 'rules', label: 'Rules', icon: ShieldCheck, element: RulesTab },
  { path: 'indexes', label: 'Indexes', icon: ListTree, element: IndexesTab },
];

/** The console: a sidebar (a tab strip on narrow screens) and the open tab. */
export function ConsoleApp() {
  const { data: overview, error } = usePolled(fetchOverview, 2000);
  return (
    <div className="flex min-h-dvh flex-col lg:flex-row">
      <Sidebar project={overview?.projectId} appUrl={overview?.url} offline={!!error} />
      <main className="min-w-0 flex-1 px-3 py-4 sm:px-5 lg:px-6 lg:py-5">
        {error && !overview && <ErrorNote>Loupe does not answer: {error}</ErrorNote>}
        {error && overview && (
          <div className="mb-4">
            <ErrorNote>
              Loupe does not answer ({error}): what you see may be out of date. The console catches up when
              loupe is back.
            </ErrorNote>
          </div>
        )}
        {overview && (
          <OverviewContext.Provider value={overview}>
            <Routes>
              <Route index element={<Navigate to="overview" replace />} />
              {tabs.map((t) => (
                <Route key={t.path} path={`${t.path}/*`} element={<t.element />} />
              ))}
              <Route path="*" element={<Navigate to="overview" replace />} />
            </Routes>
          </OverviewContext.Provider>
        )}
      </main>
    </div>
  );
}

function Sidebar({ project, appUrl, offline }: { project?: string; appUrl?: string; offline: boolean }) {
  const list = useRef<HTMLUListElement>(null);
  const { pathname } = useLocation();
  // On narrow screens the tabs scroll sideways: keep the open one in view.
  useEffect(() => {
    list.current
      ?.querySelector('[aria-current="page"]')
      ?.scrollIntoView({ block: 'nearest', inline: 'nearest' });
  }, [pathname]);
  return (
    <nav
      aria-label="Console"
      className="sticky top-0 z-20 shrink-0 border-b border-zinc-800 bg-zinc-950/95 backdrop-blur lg:h-dvh lg:w-56 lg:border-r lg:border-b-0"
    >
      <div className="flex items-center gap-2.5 px-4 pt-3 pb-2 lg:px-5 lg:pt-5 lg:pb-4">
        <span className="grid size-7 place-items-center rounded-lg bg-brand-600 text-white shadow-lg shadow-brand-600/30">
          <Braces className="size-4" aria-hidden />
        </span>
        <div className="min-w-0 leading-tight">
          <p className="text-sm font-semibold text-white">Loupe console</p>
          <p className="truncate text-[11px] text-zinc-400">{project ?? '…'}</p>
        </div>
        <span
          className={cn(
            'ml-auto flex items-center gap-1.5 text-[11px] lg:hidden',
            offline ? 'text-red-300' : 'text-emerald-400',
          )}
        >
          <span
            className={cn('size-1.5 rounded-full', offline ? 'bg-red-400' : 'bg-emerald-400')}
            aria-hidden
          />
          {offline ? 'offline' : 'live'}
        </span>
      </div>
      <ul
        ref={list}
        className="flex gap-1 overflow-x-auto px-3 pb-2 [scrollbar-width:none] lg:flex-col lg:gap-0.5 lg:overflow-visible lg:px-3"
      >
        {tabs.map((t) => (
          <li key={t.path}>
            <NavLink
              to={t.path}
              className={({ isActive }) =>
                cn(
                  'flex items-center gap-2.5 rounded-lg px-2.5 py-1.5 text-sm whitespace-nowrap transition focus-visible:outline-2 focus-visible:outline-brand-400',
                  isActive
                    ? 'bg-zinc-800/80 text-white'
                    : 'text-zinc-400 hover:bg-zinc-900 hover:text-zinc-100',
                )
              }
            >
              <t.icon className="size-4 shrink-0" />
              {t.label}
            </NavLink>
          </li>
        ))}
      </ul>
      <div className="absolute inset-x-0 bottom-0 hidden border-t border-zinc-800 px-5 py-3 text-[11px] text-zinc-400 lg:block">
        <a href={appUrl ? `${appUrl}/` : '/'} className="flex items-center gap-1.5 hover:text-zinc-300">
          <ScrollText className="size-3.5" aria-hidden /> Open the app
        </a>
      </div>
    </nav>
  );
}
