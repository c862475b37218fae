import {
  Activity,
  CreditCard,
  Database,
  Flame,
  FolderOpen,
  Globe,
  HardDrive,
  MessageSquare,
  Network,
  Radio,
  Server,
  ShieldCheck,
  Timer,
  Users,
  Zap,
} from 'lucide-react';
import { type ComponentType } from 'react';
import { Link } from 'react-router';
import { useOverview, type ServiceState } from '../api/overview';
import { Badge, Panel, TabHeader } from '../ui/controls';
import { CopyButton } from '../ui/copy-button';
import { formatBytes, formatDuration } from '../ui/format';

const stateTone: Record<ServiceState, 'green' | 'amber' | 'red'> = {
  running: 'green',
  building: 'amber',
  degraded: 'amber',
  crashed: 'red',
  failed: 'red',
};

type ServiceInfo = { label: string; tab?: string; icon: ComponentType<{ className?: string }> };

const serviceInfo: Record<string, ServiceInfo> = {
  firestore: { label: 'Cloud Firestore', tab: 'firestore', icon: Database },
  database: { label: 'Realtime Database', tab: 'database', icon: Flame },
  auth: { label: 'Authentication', tab: 'auth', icon: Users },
  storage: { label: 'Cloud Storage', tab: 'storage', icon: FolderOpen },
  functions: { label: 'Functions', tab: 'functions', icon: Zap },
  messaging: { label: 'Cloud Messaging', tab: 'messaging', icon: MessageSquare },
  pubsub: { label: 'Cloud Pub/Sub', tab: 'pubsub', icon: Radio },
  rules: { label: 'Security rules', tab: 'rules', icon: ShieldCheck },
  hosting: { label: 'Hosting', icon: Globe },
  stripe: { label: 'Stripe stand-in', icon: CreditCard },
  rates: { label: 'Exchange rates stand-in', icon: Server },
  hub: { label: 'Emulator Hub', icon: Network },
  requests: { label: 'Request log', tab: 'requests', icon: Activity },
  passthrough: { label: 'Pass-through', tab: 'requests', icon: Network },
};

/** Every service with its address, the variables to export, sizes and uptime. */
export function OverviewTab() {
  const o = useOverview();
  const exports = o.exports;
  const totalBytes = o.services.reduce((n, s) => n + s.bytes, 0);
  return (
    <div className="space-y-5">
      <TabHeader title="Overview" description={`Project ${o.projectId}, served at ${o.url}`} />
      <div className="grid grid-cols-2 gap-3 md:grid-cols-4">
        <Stat icon={Timer} label="Uptime" value={formatDuration(o.uptimeSeconds)} />
        <Stat icon={Server} label="Services" value={String(o.services.length)} />
        <Stat
          icon={Database}
          label="Documents"
          value={String(o.services.find((s) => s.name === 'firestore')?.documents ?? '—')}
        />
        <Stat icon={HardDrive} label="On disk" value={o.inMemory ? 'in memory' : formatBytes(totalBytes)} />
      </div>
      <div className="grid grid-cols-1 gap-4 xl:grid-cols-[minmax(0,3fr)_minmax(0,2fr)]">
        <Panel title="Services">
          <ul className="divide-y divide-zinc-800/80">
            {o.services.map((s) => {
              const info: ServiceInfo = serviceInfo[s.name] ?? { label: s.name, icon: Server };
              const row = (
                <>
                  <span className="grid size-8 shrink-0 place-items-center rounded-lg bg-zinc-800 text-zinc-300">
                    <info.icon className="size-4" />
                  </span>
                  <span className="min-w-0 flex-1">
                    <span className="block font-medium text-zinc-100">{info.label}</span>
                    <span className="block truncate font-mono text-xs text-zinc-400">{s.address}</span>
                    {s.detail && (
                      <span
                        className="mt-0.5 line-clamp-3 block text-xs [overflow-wrap:anywhere] whitespace-pre-wrap text-amber-300/90"
                        data-testid={`${s.name}-detail`}
                      >
                        {s.detail}
                      </span>
                    )}
                  </span>
                  <span className="hidden text-right text-xs text-zinc-400 sm:block">
                    {s.documents !== undefined && (
                      <span className="block">{s.documents.toLocaleString()} documents</span>
                    )}
                    {!o.inMemory && <span className="block text-zinc-400">{formatBytes(s.bytes)}</span>}
                  </span>
                  <Badge tone={stateTone[s.state] ?? 'zinc'}>{s.state}</Badge>
                </>
              );
              return (
                <li key={s.name}>
                  {info.tab ? (
                    <Link
                      to={`../${info.tab}`}
                      className="flex items-center gap-3 px-3 py-2.5 transition hover:bg-zinc-800/40"
                    >
                      {row}
                    </Link>
                  ) : (
                    <div className="flex items-center gap-3 px-3 py-2.5">{row}</div>
                  )}
                </li>
              );
            })}
          </ul>
        </Panel>
        <div className="space-y-4">
          <Panel title="Environment" actions={<CopyButton text={exports} label="Copy the exports" />}>
            <p className="px-3 pt-2.5 text-xs text-zinc-400">
              Export these before running server SDKs or tests against this loupe (as{' '}
              <code>loupe serve --print-env</code> prints them):
            </p>
            {/* Each line wraps (a FIREBASE_CONFIG is longer than any screen) and copies alone. */}
            <ul aria-label="Exports" className="divide-y divide-zinc-800/60 px-1 py-1.5">
              {exports
                .split('\n')
                .filter(Boolean)
                .map((line) => {
                  const name = /^export ([A-Z0-9_]+)=/.exec(line)?.[1] ?? line;
                  return (
                    <li key={line} className="flex items-start gap-1 py-0.5 pl-2">
                      <code className="min-w-0 flex-1 py-1.5 font-mono text-xs leading-relaxed [overflow-wrap:anywhere] whitespace-pre-wrap text-zinc-300">
                        {line}
                      </code>
                      <CopyButton text={line} label={`Copy ${name}`} />
                    </li>
                  );
                })}
            </ul>
          </Panel>
          <Panel title="Data">
            <dl className="grid grid-cols-[auto_1fr] gap-x-4 gap-y-1.5 px-3 py-3 text-xs">
              <dt className="text-zinc-400">Folder</dt>
              <dd className="min-w-0 font-mono [overflow-wrap:anywhere] text-zinc-300">
                {o.inMemory ? 'in memory (--in-memory)' : o.dataDir}
              </dd>
              <dt className="text-zinc-400">Started</dt>
              <dd className="text-zinc-300">{new Date(o.started).toLocaleString()}</dd>
            </dl>
          </Panel>
        </div>
      </div>
    </div>
  );
}

function Stat({
  icon: Icon,
  label,
  value,
}: {
  icon: ComponentType<{ className?: string }>;
  label: string;
  value: string;
}) {
  return (
    <div className="rounded-xl border border-zinc-800 bg-zinc-900/60 px-3.5 py-3">
      <p className="flex items-center gap-1.5 text-xs text-zinc-400">
        <Icon className="size-3.5" /> {label}
      </p>
      <p className="tabular mt-1 text-xl font-semibold text-white">{value}</p>
    </div>
  );
}
