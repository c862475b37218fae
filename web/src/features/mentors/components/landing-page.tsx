import { Clock, MessageSquare, Video } from 'lucide-react';
import { Link } from 'react-router';

const steps = [
  {
    icon: Video,
    title: 'Send your clip',
    text: 'Upload a performance, a rehearsal or a game, and pick a mentor.',
  },
  {
    icon: Clock,
    title: 'Feedback on the moment',
    text: 'Comments are pinned to timestamps: click one and the video jumps there.',
  },
  {
    icon: MessageSquare,
    title: 'Talk it through',
    text: 'Reply in threads until it clicks. Pay only for the length you send.',
  },
];

/** /landing: what Loupe is, and a call to action. */
export function LandingPage() {
  return (
    <section className="space-y-16 py-6 sm:py-16">
      <div className="mx-auto max-w-3xl space-y-6 text-center">
        <p className="text-sm font-medium tracking-wide text-brand-400 uppercase">
          Video feedback and mentoring
        </p>
        <h1 className="text-4xl font-semibold tracking-tight text-white sm:text-6xl">
          Get better, one moment at a time.
        </h1>
        <p className="text-lg text-zinc-300">
          Loupe puts a mentor&apos;s eye on your video. Every note lands on the second it&apos;s about.
        </p>
        <div className="flex flex-col justify-center gap-3 sm:flex-row">
          <Link
            to="/auth?mode=signup"
            className="rounded-xl bg-white px-6 py-3 font-semibold text-zinc-900 transition hover:bg-zinc-200"
          >
            Get started
          </Link>
          <Link
            to="/"
            className="rounded-xl border border-white/20 px-6 py-3 font-semibold text-white transition hover:bg-white/10"
          >
            Browse mentors
          </Link>
        </div>
      </div>
      <div className="grid grid-cols-1 gap-4 sm:grid-cols-3">
        {steps.map(({ icon: Icon, title, text }) => (
          <div key={title} className="rounded-2xl border border-white/10 bg-white/5 p-6 backdrop-blur">
            <Icon className="size-6 text-brand-400" aria-hidden />
            <h2 className="mt-4 font-semibold text-white">{title}</h2>
            <p className="mt-1 text-sm text-zinc-300">{text}</p>
          </div>
        ))}
      </div>
    </section>
  );
}
