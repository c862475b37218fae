import { useCategories } from '@/features/mentors/api/mentors-api';
import { ProfilePage } from '@/features/profile/components/profile-page';
import { PushSettings } from '@/features/push/components/push-settings';

/** /profile: the profile form with the push settings beneath it. */
export function ProfileRoute() {
  const categories = useCategories();
  return <ProfilePage categories={categories} extra={<PushSettings />} />;
}
