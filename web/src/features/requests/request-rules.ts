import type { FeedbackRequest, RequestStatus } from '@/types/request';

/** Largest video a request takes: what storage.rules allow under videos/ (1 GB). */
export const MAX_VIDEO_BYTES = 1024 * 1024 * 1024;

/** Why a file cannot be the request's video, or null when it can. */
export function checkVideo(file: { type: string; size: number }): string | null {
  if (!file.type.startsWith('video/')) return 'Choose a video file (MP4, MOV or WebM).';
  if (file.size === 0) return 'That video is empty.';
  if (file.size > MAX_VIDEO_BYTES) return 'Videos can be up to 1 GB.';
  return null;
}

/** Storage path of a request's video: videos/{uid}/{time}_{safe name}. */
export function videoPath(uid: string, time: number, fileName: string): string {
  const safe = fileName.replace(/[^\w.-]+/g, '_').replace(/^[._]+/, '') || 'video';
  return `videos/${uid}/${time}_${safe}`;
}

/** How each status reads. */
export const STATUS_LABELS: Record<RequestStatus, string> = {
  pending: 'Pending',
  accepted: 'In progress',
  declined: 'Declined',
  completed: 'Completed',
  cancelled: 'Cancelled',
};

/** The moves a person may make on a request (firestore.rules): label and target status. */
export function availableActions(
  request: Pick<FeedbackRequest, 'status' | 'mentorId' | 'requesterId'>,
  uid: string | null,
): { label: string; status: RequestStatus }[] {
  if (uid && uid === request.mentorId) {
    if (request.status === 'pending') {
      return [
        { label: 'Accept', status: 'accepted' },
        { label: 'Decline', status: 'declined' },
      ];
    }
    if (request.status === 'accepted') return [{ label: 'Mark completed', status: 'completed' }];
  }
  if (uid && uid === request.requesterId && request.status === 'pending') {
    return [{ label: 'Cancel request', status: 'cancelled' }];
  }
  return [];
}
