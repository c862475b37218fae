import { doc, serverTimestamp, updateDoc } from 'firebase/firestore';
import { firebase } from '@/lib/firebase';

/** Saves a signed-in person's currency on their profile (docs/product-spec.md §7); errors are logged and rethrown. */
export async function savePreferredCurrency(uid: string, code: string): Promise<void> {
  try {
    await updateDoc(doc(firebase().db, 'users', uid), {
      preferredCurrency: code,
      updatedAt: serverTimestamp(),
    });
  } catch (err) {
    console.error('Failed to update currency preference:', err);
    throw err;
  }
}
