import { validCard } from '@/lib/rate-cards';
import type { UserProfile } from '@/types/user';

/** What a mentor profile can lack before it is listed, as the profile page names it. */
export type Missing = 'a title' | 'a bio' | 'a category' | 'a rate card';

/**
 * What keeps a mentor profile out of the directory, in the order the page
 * asks for it: the same rule as the profiles function (functions/profiles),
 * which decides what is listed. Empty when the profile is complete.
 */
export function missingForListing(
  p: Pick<UserProfile, 'title' | 'bio' | 'taxonomySelections' | 'rateCards'>,
): Missing[] {
  const missing: Missing[] = [];
  if (!p.title?.trim()) missing.push('a title');
  if (!p.bio?.trim()) missing.push('a bio');
  if (!(p.taxonomySelections ?? []).length) missing.push('a category');
  if (!(p.rateCards ?? []).some(validCard)) missing.push('a rate card');
  return missing;
}
