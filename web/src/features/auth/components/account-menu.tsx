import * as DropdownMenu from '@radix-ui/react-dropdown-menu';
import { Inbox, LogOut, UserRound } from 'lucide-react';
import { Link, useNavigate } from 'react-router';
import { Avatar } from '@/components/ui/avatar';
import type { Session } from '@/lib/session';
import { signOutUser } from '../api/auth-api';

const item =
  'flex cursor-pointer items-center gap-2 rounded-lg px-3 py-2 text-sm text-zinc-200 outline-none data-[highlighted]:bg-zinc-800 data-[highlighted]:text-white';

/** The avatar menu of the top bar: Profile, Requests and Sign Out (docs/product-spec.md §2). */
export function AccountMenu({ session }: { session: Session }) {
  const navigate = useNavigate();
  const person = {
    photoURL: session.profile?.photoURL || session.user?.photoURL,
    name: session.profile?.name || session.user?.displayName,
    email: session.user?.email,
  };
  return (
    <DropdownMenu.Root>
      <DropdownMenu.Trigger
        aria-label="Account menu"
        className="rounded-full focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-brand-400"
      >
        <Avatar person={person} />
      </DropdownMenu.Trigger>
      <DropdownMenu.Portal>
        <DropdownMenu.Content
          align="end"
          sideOffset={8}
          className="z-50 min-w-56 rounded-xl border border-zinc-800 bg-zinc-900 p-1.5 shadow-2xl shadow-black/60"
        >
          <div className="px-3 py-2">
            <p className="truncate text-sm font-medium text-white">{person.name || 'Your account'}</p>
            <p className="truncate text-xs text-zinc-400">{person.email}</p>
          </div>
          <DropdownMenu.Separator className="my-1 h-px bg-zinc-800" />
          <DropdownMenu.Item asChild className={item}>
            <Link to="/profile">
              <UserRound className="size-4" aria-hidden /> Profile
            </Link>
          </DropdownMenu.Item>
          <DropdownMenu.Item asChild className={item}>
            <Link to="/requests">
              <Inbox className="size-4" aria-hidden /> Requests
            </Link>
          </DropdownMenu.Item>
          <DropdownMenu.Item
            className={item}
            onSelect={() => void signOutUser().then(() => navigate('/auth', { replace: true }))}
          >
            <LogOut className="size-4" aria-hidden /> Sign Out
          </DropdownMenu.Item>
        </DropdownMenu.Content>
      </DropdownMenu.Portal>
    </DropdownMenu.Root>
  );
}
