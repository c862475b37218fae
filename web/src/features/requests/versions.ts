import type { FeedbackRequest, RequestStatus, VideoVersion } from '@/types/request';

/** The statuses in which the requester may add a version (firestore.rules). */
const REVISABLE: RequestStatus[] = ['pending', 'accepted'];

/** How a version reads: v1, v2, … */
export function versionLabel(number: number): string {
  return `v${number}`;
}

/** v1: the request's own video. */
export function firstVersion(
  request: Pick<FeedbackRequest, 'videoPath' | 'videoUrl' | 'videoDuration' | 'videoFrameRate' | 'createdAt'>,
): VideoVersion {
  return {
    number: 1,
    videoPath: request.videoPath,
    videoUrl: request.videoUrl,
    videoDuration: request.videoDuration,
    videoFrameRate: request.videoFrameRate,
    note: '',
    createdAt: request.createdAt,
  };
}

/**
 * Every version of a request in order, v1 first: the request's own video,
 * then the stored takes by number. A stored number below 2, not a whole
 * number, or seen before is left out.
 */
export function orderVersions(
  request: Parameters<typeof firstVersion>[0],
  stored: VideoVersion[],
): VideoVersion[] {
  const seen = new Set<number>([1]);
  const takes = [...stored]
    .filter((v) => Number.isInteger(v.number) && v.number >= 2)
    .sort((a, b) => a.number - b.number)
    .filter((v) => !seen.has(v.number) && seen.add(v.number));
  return [firstVersion(request), ...takes];
}

/**
 * The version to show: the asked number when the request has it, else the
 * latest (the one the requester uploaded last).
 */
export function pickVersion(versions: VideoVersion[], asked: number | null): VideoVersion {
  const latest = versions[versions.length - 1];
  if (!latest) throw new Error('a request has at least one version');
  return versions.find((v) => v.number === asked) ?? latest;
}

/** Whether this person may upload a new version: the requester, while the request is open. */
export function canAddVersion(
  request: Pick<FeedbackRequest, 'requesterId' | 'status'>,
  uid: string,
): boolean {
  return request.requesterId === uid && REVISABLE.includes(request.status);
}

/** The storage path of the latest version's video (v1's until a take is added). */
export function latestVideoPath(request: Pick<FeedbackRequest, 'videoPath' | 'latestVideoPath'>): string {
  return request.latestVideoPath || request.videoPath;
}
