import type { User } from 'firebase/auth';
import {
  addDoc,
  collection,
  doc,
  setDoc,
  orderBy,
  query,
  serverTimestamp,
  updateDoc,
  where,
  writeBatch,
  type DocumentData,
  type QuerySnapshot,
} from 'firebase/firestore';
import { getDownloadURL, ref, uploadBytes, uploadBytesResumable } from 'firebase/storage';
import { useEffect, useState } from 'react';
import { firebase, timestampToDate } from '@/lib/firebase';
import { readFrameRate, urlReader } from '@/lib/mp4';
import { paymentFromData } from '@/lib/payments';
import { capturePoster } from '@/lib/video-poster';
import { useLiveDoc, useLiveQuery, type Live } from '@/lib/firebase-live';
import type { FeedbackRequest, RequestStatus, VideoVersion } from '@/types/request';
import type { Payment, RequestReview } from '@/types/request';
import type { PublicMentor, RateCard } from '@/types/user';
import { videoPath } from '../request-rules';

function fromDoc(id: string, d: DocumentData): FeedbackRequest {
  return {
    id,
    requesterId: d.requesterId ?? '',
    requesterName: d.requesterName ?? '',
    mentorId: d.mentorId ?? '',
    mentorName: d.mentorName ?? '',
    title: d.title ?? '',
    description: d.description ?? '',
    videoPath: d.videoPath ?? '',
    videoUrl: d.videoUrl ?? '',
    videoDuration: typeof d.videoDuration === 'number' ? d.videoDuration : null,
    videoFrameRate: typeof d.videoFrameRate === 'number' && d.videoFrameRate > 0 ? d.videoFrameRate : null,
    rateCard: { duration: d.rateCard?.duration ?? '', price: Number(d.rateCard?.price ?? 0) },
    currency: d.currency ?? 'USD',
    status: d.status ?? 'pending',
    paymentStatus: d.paymentStatus ?? 'unpaid',
    paymentId: d.paymentId ?? '',
    dueAt: timestampToDate(d.dueAt),
    versionCount: Number.isInteger(d.versionCount) && d.versionCount > 1 ? d.versionCount : 1,
    latestVideoPath: typeof d.latestVideoPath === 'string' ? d.latestVideoPath : '',
    thumbnailPath: typeof d.thumbnailPath === 'string' ? d.thumbnailPath : null,
    latestThumbnailPath: typeof d.latestThumbnailPath === 'string' ? d.latestThumbnailPath : null,
    createdAt: timestampToDate(d.createdAt),
    updatedAt: timestampToDate(d.updatedAt),
  };
}

/** What the requester fills in on a mentor's page. */
export interface NewRequest {
  mentor: Pick<PublicMentor, 'id' | 'name' | 'displayName'>;
  requesterName: string;
  rateCard: RateCard;
  currency: string;
  title: string;
  description: string;
  /** The uploaded video: its storage path (startVideoUpload) and its length in seconds, when known. */
  videoPath: string;
  videoDuration: number | null;
  /** Its frame rate read from the file's boxes, when known. */
  videoFrameRate: number | null;
  /** A still of it for lists (uploadPoster), when one was made. */
  thumbnailPath: string | null;
}

/** A video upload under way, resumable: it can wait out the network (pause, resume) or be cancelled. */
export interface VideoUpload {
  /** Where the video goes: videos/{uid}/{time}_{name}. */
  path: string;
  /** Reports progress from 0 to 1. */
  onProgress: (report: (fraction: number) => void) => void;
  pause: () => void;
  resume: () => void;
  cancel: () => void;
  /** Settles when the upload ends: rejects with code 'storage/canceled' when cancelled. */
  done: Promise<void>;
}

/** Whether an upload ended because it was cancelled. */
export function isCancelled(err: unknown): boolean {
  return (err as { code?: string } | null)?.code === 'storage/canceled';
}

/**
 * Starts a resumable upload of a request's video to videos/{uid}/…, with
 * its length (seconds, probed in the browser) kept as the object's
 * durationSeconds metadata, which the payments function reads for files
 * it cannot probe itself.
 */
export function startVideoUpload(uid: string, video: File, duration: number | null): VideoUpload {
  const path = videoPath(uid, Date.now(), video.name);
  const task = uploadBytesResumable(ref(firebase().storage, path), video, {
    contentType: video.type,
    ...(duration === null ? {} : { customMetadata: { durationSeconds: duration.toFixed(3) } }),
  });
  const done = new Promise<void>((resolve, reject) => task.then(() => resolve(), reject));
  done.catch((err: unknown) => {
    if (!isCancelled(err)) console.error('Error uploading the video:', err);
  });
  return {
    path,
    onProgress: (report) =>
      task.on('state_changed', (s) => report(s.totalBytes ? s.bytesTransferred / s.totalBytes : 0)),
    pause: () => void task.pause(),
    resume: () => void task.resume(),
    // The SDK cancels only a running (or pausing) task: a paused one is resumed to be cancelled.
    cancel: () => {
      if (task.snapshot.state === 'paused') task.resume();
      task.cancel();
    },
    done,
  };
}

/**
 * Makes a still of a video for lists (capturePoster) and stores it at
 * thumbnails/{uid}/{time}.jpg; resolves to its path, or null when the
 * browser could not draw the video or the upload failed (logged): a list
 * then shows the video's own first frame.
 */
export async function uploadPoster(uid: string, video: File): Promise<string | null> {
  try {
    const poster = await capturePoster(video);
    if (!poster) return null;
    const path = `thumbnails/${uid}/${Date.now()}.jpg`;
    await uploadBytes(ref(firebase().storage, path), poster, { contentType: 'image/jpeg' });
    return path;
  } catch (err) {
    console.error('Error storing the video thumbnail:', err);
    return null;
  }
}

/**
 * Creates the pending feedbackRequests document for an uploaded video and
 * resolves to its id. Errors are logged and rethrown.
 */
export async function createFeedbackRequest(user: User | null, input: NewRequest): Promise<string> {
  try {
    if (!user) throw new Error('No user logged in');
    const added = await addDoc(collection(firebase().db, 'feedbackRequests'), {
      requesterId: user.uid,
      requesterName: input.requesterName,
      mentorId: input.mentor.id,
      mentorName: input.mentor.name || input.mentor.displayName,
      title: input.title.trim(),
      description: input.description.trim(),
      videoPath: input.videoPath,
      videoUrl: await getDownloadURL(ref(firebase().storage, input.videoPath)),
      ...(input.videoDuration === null ? {} : { videoDuration: input.videoDuration }),
      ...(input.videoFrameRate === null ? {} : { videoFrameRate: input.videoFrameRate }),
      ...(input.thumbnailPath === null ? {} : { thumbnailPath: input.thumbnailPath }),
      rateCard: { duration: input.rateCard.duration, price: input.rateCard.price },
      currency: input.currency,
      status: 'pending',
      paymentStatus: 'unpaid',
      createdAt: serverTimestamp(),
      updatedAt: serverTimestamp(),
    });
    return added.id;
  } catch (err) {
    console.error('Error creating feedback request:', err);
    throw err;
  }
}

/** A new take the requester uploaded (startVideoUpload), with what was read from the file. */
export interface NewVersion {
  videoPath: string;
  videoDuration: number | null;
  videoFrameRate: number | null;
  /** What changed in this take; may be empty. */
  note: string;
  /** A still of it for lists (uploadPoster), when one was made. */
  thumbnailPath: string | null;
}

/**
 * Adds the next version of a request's video: feedbackRequests/{id}/versions/{n}
 * and the request's versionCount and latestVideoPath, in one batch (the
 * rules check both halves together). Resolves to the new number. Errors are
 * logged and rethrown.
 */
export async function addVersion(
  user: User | null,
  request: Pick<FeedbackRequest, 'id' | 'versionCount'>,
  input: NewVersion,
): Promise<number> {
  try {
    if (!user) throw new Error('No user logged in');
    const { db, storage } = firebase();
    const number = request.versionCount + 1;
    const target = doc(db, 'feedbackRequests', request.id);
    const batch = writeBatch(db);
    batch.set(doc(target, 'versions', String(number)), {
      number,
      videoPath: input.videoPath,
      videoUrl: await getDownloadURL(ref(storage, input.videoPath)),
      ...(input.videoDuration === null ? {} : { videoDuration: input.videoDuration }),
      ...(input.videoFrameRate === null ? {} : { videoFrameRate: input.videoFrameRate }),
      ...(input.note.trim() ? { note: input.note.trim() } : {}),
      ...(input.thumbnailPath === null ? {} : { thumbnailPath: input.thumbnailPath }),
      createdAt: serverTimestamp(),
    });
    batch.update(target, {
      versionCount: number,
      latestVideoPath: input.videoPath,
      latestThumbnailPath: input.thumbnailPath,
      updatedAt: serverTimestamp(),
    });
    await batch.commit();
    return number;
  } catch (err) {
    console.error('Error adding a version:', err);
    throw err;
  }
}

function versionFromDoc(d: DocumentData): VideoVersion {
  return {
    number: Number(d.number),
    videoPath: String(d.videoPath ?? ''),
    videoUrl: String(d.videoUrl ?? ''),
    videoDuration: typeof d.videoDuration === 'number' ? d.videoDuration : null,
    videoFrameRate: typeof d.videoFrameRate === 'number' && d.videoFrameRate > 0 ? d.videoFrameRate : null,
    note: typeof d.note === 'string' ? d.note : '',
    createdAt: timestampToDate(d.createdAt),
  };
}

/**
 * The takes added to a request (v2 on), live, by number; nothing is read
 * while the request has only its own video.
 */
export function useStoredVersions(
  request: Pick<FeedbackRequest, 'id' | 'versionCount'> | null,
): Live<VideoVersion[]> {
  const id = request && request.versionCount > 1 ? request.id : null;
  return useLiveQuery(
    id && `versions/${id}`,
    () =>
      query(collection(firebase().db, 'feedbackRequests', id ?? '', 'versions'), orderBy('number', 'asc')),
    {
      read: (snap) => snap.docs.map((d) => versionFromDoc(d.data({ serverTimestamps: 'estimate' }))),
      initial: [],
      log: 'Error reading versions:',
    },
  );
}

/** Moves a request to a new status (the rules say who may make which move). */
export async function setRequestStatus(id: string, status: RequestStatus): Promise<void> {
  try {
    await updateDoc(doc(firebase().db, 'feedbackRequests', id), { status, updatedAt: serverTimestamp() });
  } catch (err) {
    console.error('Error updating feedback request:', err);
    throw err;
  }
}

const requestsWhere = (field: 'requesterId' | 'mentorId', uid: string) =>
  query(collection(firebase().db, 'feedbackRequests'), where(field, '==', uid), orderBy('createdAt', 'desc'));

const readRequests = {
  read: (snap: QuerySnapshot) =>
    snap.docs.map((d) => fromDoc(d.id, d.data({ serverTimestamps: 'estimate' }))),
  initial: [] as FeedbackRequest[],
  log: 'Error reading feedback requests:',
};

/** The signed-in person's requests, live: the ones they sent and the ones they received, newest first. */
export function useMyRequests(
  uid: string | null,
): Live<{ sent: FeedbackRequest[]; received: FeedbackRequest[] }> {
  const sent = useLiveQuery(
    uid && `sent/${uid}`,
    () => requestsWhere('requesterId', uid ?? ''),
    readRequests,
  );
  const received = useLiveQuery(
    uid && `received/${uid}`,
    () => requestsWhere('mentorId', uid ?? ''),
    readRequests,
  );
  return {
    data: { sent: sent.data, received: received.data },
    loading: sent.loading || received.loading,
    error: sent.error ?? received.error,
  };
}

/** One request, live; null when it does not exist or cannot be read. */
export function useFeedbackRequest(id: string): Live<FeedbackRequest | null> {
  return useLiveDoc(`feedbackRequests/${id}`, () => doc(firebase().db, 'feedbackRequests', id), {
    read: (snap) => (snap.exists() ? fromDoc(snap.id, snap.data({ serverTimestamps: 'estimate' })) : null),
    initial: null,
    log: 'Error reading feedback request:',
  });
}

/**
 * A playable address for the request's video: a fresh download URL for its
 * storage path (so it follows the storage host this app talks to), else the
 * stored videoUrl. Empty while the address is being resolved.
 */
export function useVideoUrl(request: Pick<FeedbackRequest, 'videoPath' | 'videoUrl'> | null): string {
  const [resolved, setResolved] = useState<{ path: string; url: string } | null>(null);
  const path = request?.videoPath ?? '';
  const stored = request?.videoUrl ?? '';
  useEffect(() => {
    if (!path) return;
    let live = true;
    getDownloadURL(ref(firebase().storage, path))
      .catch((err: unknown) => {
        console.error('Error resolving the video address:', err);
        return stored;
      })
      .then((url) => live && setResolved({ path, url }));
    return () => {
      live = false;
    };
  }, [path, stored]);
  if (!path) return stored;
  return resolved?.path === path ? resolved.url : '';
}

/**
 * The frame rate of a request's video before it plays: the one stored with
 * the request (read from the file at upload), else read from the file's
 * boxes at url with range requests; null until known, or when the file
 * does not say.
 */
export function useVideoFrameRate(
  request: Pick<FeedbackRequest, 'videoFrameRate'> | null,
  url: string,
): number | null {
  const stored = request?.videoFrameRate ?? null;
  const [read, setRead] = useState<{ url: string; fps: number | null } | null>(null);
  useEffect(() => {
    if (stored !== null || !url) return;
    let live = true;
    readFrameRate(urlReader(url))
      .catch(() => null)
      .then((fps) => live && setRead({ url, fps }));
    return () => {
      live = false;
    };
  }, [stored, url]);
  return stored ?? (read?.url === url ? read.fps : null);
}

/**
 * Opens Stripe Checkout for the signed-in requester's unpaid request: the
 * payments function (same origin, /api/payments/checkout) answers with the
 * Checkout page's address, which comes back to the request page when paid
 * (?checkout=done) or abandoned. Fails with 'No user logged in', or with the
 * function's message (e.g. the mentor cannot take payments yet).
 */
export async function startCheckout(user: User | null, requestId: string): Promise<string> {
  if (!user) throw new Error('No user logged in');
  const back = `${window.location.origin}/requests/${encodeURIComponent(requestId)}`;
  const response = await fetch('/api/payments/checkout', {
    method: 'POST',
    headers: { Authorization: `Bearer ${await user.getIdToken()}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({
      requestId,
      successUrl: `${back}?checkout=done`,
      cancelUrl: `${back}?checkout=cancelled`,
    }),
  });
  const body = (await response.json().catch(() => ({}))) as { url?: string; error?: { message?: string } };
  if (!response.ok || !body.url) {
    throw new Error(body.error?.message ?? `Payments are unavailable (${response.status})`);
  }
  return body.url;
}

/** A request's payment record (payments/{paymentId}), live; null until there is one. */
export function usePayment(paymentId: string): Live<Payment | null> {
  return useLiveDoc(
    paymentId ? `payments/${paymentId}` : null,
    () => doc(firebase().db, 'payments', paymentId),
    {
      read: (snap) => {
        const d = snap.data({ serverTimestamps: 'estimate' });
        return d ? paymentFromData(snap.id, d) : null;
      },
      initial: null,
      log: 'Error reading the payment:',
    },
  );
}

/** The requester's review of a request (reviews/{requestId}), live; null when there is none. */
export function useReview(requestId: string): Live<RequestReview | null> {
  return useLiveDoc(`reviews/${requestId}`, () => doc(firebase().db, 'reviews', requestId), {
    read: (snap) => {
      const d = snap.data({ serverTimestamps: 'estimate' });
      return d ? { rating: Number(d.rating ?? 0), text: String(d.text ?? '') } : null;
    },
    initial: null,
    log: 'Error reading the review:',
  });
}

/** Rates a completed request 1–5 with a review, once (reviews/{requestId}). Errors are logged and rethrown. */
export async function submitReview(
  user: User | null,
  request: Pick<FeedbackRequest, 'id' | 'mentorId'>,
  review: RequestReview & { reviewerName: string },
): Promise<void> {
  try {
    if (!user) throw new Error('No user logged in');
    await setDoc(doc(firebase().db, 'reviews', request.id), {
      requesterId: user.uid,
      mentorId: request.mentorId,
      reviewerName: review.reviewerName,
      rating: review.rating,
      text: review.text.trim(),
      createdAt: serverTimestamp(),
    });
  } catch (err) {
    console.error('Error saving the review:', err);
    throw err;
  }
}
