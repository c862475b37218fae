import { UserRound } from 'lucide-react';
import { cn } from '@/lib/cn';
import { optimisedImage } from '@/lib/image';

/** Who an avatar shows. */
export interface AvatarPerson {
  photoURL?: string | null;
  name?: string | null;
  email?: string | null;
}

/** What to draw (docs/product-spec.md §2): the photo, else the first letter of the name or e-mail, else an icon. */
export function avatarFallback(
  person: AvatarPerson,
): { kind: 'photo'; url: string } | { kind: 'letter'; letter: string } | { kind: 'icon' } {
  const url = person.photoURL?.trim();
  if (url) return { kind: 'photo', url };
  const source = person.name?.trim() || person.email?.trim();
  const first = source ? [...source][0] : undefined;
  if (first) return { kind: 'letter', letter: first.toUpperCase() };
  return { kind: 'icon' };
}

const sizes = { sm: 'size-8 text-sm', md: 'size-10 text-base', lg: 'size-20 text-2xl' } as const;

/** The rendered width of each size in CSS pixels, for the image optimiser. */
const pixels = { sm: 32, md: 40, lg: 80 } as const;

/** A round avatar; a photo from storage comes through the image optimiser at its rendered size. */
export function Avatar({
  person,
  size = 'sm',
  className,
}: {
  person: AvatarPerson;
  size?: keyof typeof sizes;
  className?: string;
}) {
  const shown = avatarFallback(person);
  const base = cn(
    'inline-grid shrink-0 place-items-center overflow-hidden rounded-full bg-gradient-to-br from-brand-500 to-fuchsia-600 font-semibold text-white ring-2 ring-zinc-900',
    sizes[size],
    className,
  );
  if (shown.kind === 'photo') {
    const img = optimisedImage(shown.url, pixels[size]);
    return (
      <img
        src={img.src}
        srcSet={img.srcSet}
        width={pixels[size]}
        height={pixels[size]}
        alt=""
        loading="lazy"
        decoding="async"
        className={cn(base, 'object-cover')}
      />
    );
  }
  if (shown.kind === 'letter') {
    return (
      <span className={base} aria-hidden>
        {shown.letter}
      </span>
    );
  }
  return (
    <span className={cn(base, 'from-zinc-700 to-zinc-600')} aria-hidden data-testid="avatar-icon">
      <UserRound className="size-1/2" />
    </span>
  );
}
