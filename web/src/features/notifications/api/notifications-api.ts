import {
  addDoc,
  collection,
  doc,
  limit,
  orderBy,
  query,
  serverTimestamp,
  updateDoc,
  where,
  writeBatch,
  type DocumentData,
} from 'firebase/firestore';
import { firebase, timestampToDate } from '@/lib/firebase';
import { useLiveQuery, type Live } from '@/lib/firebase-live';
import { QUERY_LIMIT, type AppNotification } from '../notification-rules';

function fromDoc(id: string, d: DocumentData): AppNotification {
  return {
    id,
    userId: d.userId,
    type: d.type ?? '',
    title: d.title ?? '',
    message: d.message ?? '',
    data: d.data ?? {},
    read: d.read === true,
    createdAt: timestampToDate(d.createdAt),
    link: d.link || undefined,
  };
}

/** A user's notifications, newest first, at most 50 (docs/product-spec.md §7), live; none without a uid. */
export function useNotificationList(uid: string | null): Live<AppNotification[]> {
  return useLiveQuery(
    uid && `notifications/${uid}`,
    () =>
      query(
        collection(firebase().db, 'notifications'),
        where('userId', '==', uid ?? ''),
        orderBy('createdAt', 'desc'),
        limit(QUERY_LIMIT),
      ),
    {
      read: (snap) => snap.docs.map((d) => fromDoc(d.id, d.data({ serverTimestamps: 'estimate' }))),
      initial: [],
      log: 'Failed to load notifications:',
    },
  );
}

/** Marks one notification read (errors are logged and swallowed, docs/product-spec.md §8). */
export async function markNotificationRead(id: string): Promise<void> {
  try {
    await updateDoc(doc(firebase().db, 'notifications', id), { read: true });
  } catch (err) {
    console.error('Failed to mark notification as read:', err);
  }
}

/** Marks every unread notification read in one batch (errors logged and swallowed). */
export async function markAllNotificationsRead(items: AppNotification[]): Promise<void> {
  const unread = items.filter((n) => !n.read);
  if (unread.length === 0) return;
  try {
    const batch = writeBatch(firebase().db);
    for (const n of unread) batch.update(doc(firebase().db, 'notifications', n.id), { read: true });
    await batch.commit();
  } catch (err) {
    console.error('Failed to mark all notifications as read:', err);
  }
}

/** Creates a notification (docs/product-spec.md §7); errors are logged and rethrown. */
export async function createNotification(
  userId: string,
  type: string,
  title: string,
  message: string,
  data: Record<string, unknown> = {},
  link?: string,
): Promise<string> {
  try {
    const ref = await addDoc(collection(firebase().db, 'notifications'), {
      userId,
      type,
      title,
      message,
      data,
      read: false,
      createdAt: serverTimestamp(),
      ...(link ? { link } : {}),
    });
    return ref.id;
  } catch (err) {
    console.error('Error creating notification:', err);
    throw err;
  }
}
