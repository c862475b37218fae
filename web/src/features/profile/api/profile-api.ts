import { updateProfile, type User } from 'firebase/auth';
import { doc, serverTimestamp, updateDoc } from 'firebase/firestore';
import { getDownloadURL, ref, uploadBytes } from 'firebase/storage';
import { firebase } from '@/lib/firebase';
import type { UserProfile } from '@/types/user';

/** The profile fields a person edits on /profile. */
export type EditableProfile = Pick<
  UserProfile,
  | 'name'
  | 'displayName'
  | 'photoURL'
  | 'title'
  | 'bio'
  | 'expertise'
  | 'taxonomySelections'
  | 'previouslyWorkedWith'
  | 'social'
  | 'rateCards'
  | 'isMentor'
>;

/**
 * Saves the profile: users/{uid}, and the account's display name and photo.
 * Fails with 'No user logged in' when nobody is signed in (spec §5).
 */
export async function saveProfile(user: User | null, fields: EditableProfile): Promise<void> {
  if (!user) throw new Error('No user logged in');
  await updateProfile(user, {
    displayName: fields.displayName || fields.name,
    photoURL: fields.photoURL || null,
  });
  await updateDoc(doc(firebase().db, 'users', user.uid), { ...fields, updatedAt: serverTimestamp() });
}

/** Uploads a profile photo to avatars/{uid}/… and returns its download URL. */
export async function uploadAvatar(uid: string, file: File): Promise<string> {
  const ext = file.name.includes('.') ? file.name.split('.').pop() : 'jpg';
  const target = ref(firebase().storage, `avatars/${uid}/${Date.now()}.${ext}`);
  await uploadBytes(target, file, { contentType: file.type });
  return getDownloadURL(target);
}
