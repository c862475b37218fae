import { updateProfile, type User } from 'firebase/auth';
import { doc, serverTimestamp, updateDoc } from 'firebase/firestore';
import { getDownloadURL, ref, uploadBytes } from 'firebase/storage';
import { firebase } from '@/lib/firebase';
import { portableUrl } from '@/lib/image';
import type { ProfileField, UserProfile } from '@/types/user';

/** The profile fields a person edits on /profile. */
export type EditableProfile = Pick<UserProfile, ProfileField | 'isMentor'>;

/**
 * Saves the profile: users/{uid}, and the account's display name and photo.
 * A photo from a local loupe is stored without its host (portable data).
 * Fails with 'No user logged in' when nobody is signed in (docs/product-spec.md §5).
 */
export async function saveProfile(user: User | null, fields: EditableProfile): Promise<void> {
  if (!user) throw new Error('No user logged in');
  const photoURL = portableUrl(fields.photoURL.trim());
  await updateProfile(user, {
    displayName: fields.displayName || fields.name,
    photoURL: photoURL || null,
  });
  await updateDoc(doc(firebase().db, 'users', user.uid), {
    ...fields,
    photoURL,
    updatedAt: serverTimestamp(),
  });
}

/** Uploads a file under folder/{uid}/ and returns its download URL (host-less when local). */
async function uploadPublic(folder: 'avatars' | 'intros', uid: string, file: File, fallbackExt: string) {
  const ext = file.name.includes('.') ? file.name.split('.').pop() : fallbackExt;
  const target = ref(firebase().storage, `${folder}/${uid}/${Date.now()}.${ext}`);
  await uploadBytes(target, file, { contentType: file.type });
  return portableUrl(await getDownloadURL(target));
}

/** Uploads a profile photo to avatars/{uid}/… and returns its download URL (host-less when local). */
export function uploadAvatar(uid: string, file: File): Promise<string> {
  return uploadPublic('avatars', uid, file, 'jpg');
}

/** Uploads a mentor's intro clip to intros/{uid}/… (public) and returns its download URL. */
export function uploadIntroClip(uid: string, file: File): Promise<string> {
  return uploadPublic('intros', uid, file, 'mp4');
}

/**
 * Starts Stripe Connect onboarding for the signed-in mentor: the payments
 * function (same origin, /api/payments) answers with the onboarding link,
 * which comes back to /profile when done. Fails with 'No user logged in'
 * when nobody is signed in, or with the function's message.
 */
export async function startPayoutOnboarding(user: User | null): Promise<string> {
  if (!user) throw new Error('No user logged in');
  const back = `${window.location.origin}/profile`;
  const response = await fetch('/api/payments/connect', {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${await user.getIdToken()}`,
      'Content-Type': 'application/json',
    },
    body: JSON.stringify({ returnUrl: `${back}?payouts=done`, refreshUrl: `${back}?payouts=retry` }),
  });
  const body = (await response.json().catch(() => ({}))) as {
    url?: string;
    error?: { message?: string };
  };
  if (!response.ok || !body.url) {
    throw new Error(body.error?.message ?? `Payouts are unavailable (${response.status})`);
  }
  return body.url;
}
