import type { ReactNode } from 'react';
import { Link } from 'react-router';
import { Avatar } from '@/components/ui/avatar';
import type { Category, UserProfile } from '@/types/user';
import { useMentor } from '../api/mentors-api';
import { CategoryTags, RateCardList } from './mentor-details';

/** /mentors/:id: a mentor's profile, with `action(mentor)` (the request form) beside it. */
export function MentorPage({
  id,
  categories,
  action,
}: {
  id: string;
  categories: Category[];
  action: (mentor: UserProfile) => ReactNode;
}) {
  const { mentor, loading } = useMentor(id);
  if (loading) return <p className="text-zinc-500">Loading…</p>;
  if (!mentor || !mentor.isMentor) {
    return (
      <p className="rounded-xl border border-zinc-800 bg-zinc-900/60 p-6 text-zinc-300">
        This mentor is not available.{' '}
        <Link to="/" className="text-brand-400 hover:text-brand-300">
          Browse mentors
        </Link>
      </p>
    );
  }
  return (
    <div className="grid gap-6 lg:grid-cols-[minmax(0,1fr)_24rem]">
      <section className="space-y-6 rounded-2xl border border-zinc-800 bg-zinc-900/60 p-5 sm:p-6">
        <header className="flex items-center gap-4">
          <Avatar person={{ photoURL: mentor.photoURL, name: mentor.name, email: mentor.email }} size="lg" />
          <div className="min-w-0">
            <h1 className="text-2xl font-semibold tracking-tight text-white">
              {mentor.name || mentor.displayName}
            </h1>
            <p className="text-zinc-400">{mentor.title}</p>
          </div>
        </header>
        <CategoryTags mentor={mentor} categories={categories} />
        {mentor.bio && <p className="whitespace-pre-wrap text-zinc-300">{mentor.bio}</p>}
        {(mentor.expertise ?? []).length > 0 && (
          <p className="text-sm text-zinc-400">
            <span className="text-zinc-500">Expertise: </span>
            {mentor.expertise.join(', ')}
          </p>
        )}
        {mentor.previouslyWorkedWith && (
          <p className="text-sm text-zinc-400">
            <span className="text-zinc-500">Worked with: </span>
            {mentor.previouslyWorkedWith}
          </p>
        )}
        <RateCardList mentor={mentor} className="sm:grid-cols-4" />
      </section>
      <div>{action(mentor)}</div>
    </div>
  );
}
