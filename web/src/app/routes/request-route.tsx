import { ArrowLeft } from 'lucide-react';
import { useCallback, useMemo, useRef, useState } from 'react';
import { Link, useParams, useSearchParams } from 'react-router';
import type { VideoAnnotation } from '@/components/video-drawing';
import { VideoCompare } from '@/components/video-compare';
import { VideoPlayer, type VideoMarker, type VideoPlayerHandle } from '@/components/video-player';
import { useReadRequestNotifications } from '@/features/notifications/hooks/use-read-request-notifications';
import { CommentThread } from '@/features/comments/components/comment-thread';
import { commentsOfVersion } from '@/features/comments/versions';
import { formatCommentSpan, markIn, markOut, type RangeMarks } from '@/features/comments/comment-rules';
import { TimecodeProvider } from '@/features/comments/components/timecode';
import {
  useFeedbackRequest,
  useStoredVersions,
  useVideoFrameRate,
  useVideoUrl,
} from '@/features/requests/api/requests-api';
import { RequestSummary } from '@/features/requests/components/request-summary';
import { VersionBar } from '@/features/requests/components/version-bar';
import { canAddVersion, orderVersions, pickVersion, versionLabel } from '@/features/requests/versions';
import { useSession } from '@/lib/session';
import type { Comment, DrawnShape, VideoVersion } from '@/types/request';

/** The markers of comments on a player's timeline: each timed, not deleted comment (a range spans). */
function commentMarkers(comments: Comment[]): VideoMarker[] {
  return comments.flatMap((c) =>
    c.deleted || c.videoTimestamp === null
      ? []
      : [
          {
            id: c.id,
            time: c.videoTimestamp,
            end: c.videoEndTimestamp,
            label: `${formatCommentSpan(c.videoTimestamp, c.videoEndTimestamp)} · ${c.userDisplayName}`,
            preview: c.content,
          },
        ],
  );
}

/**
 * /requests/:id, the review page: the video with comment markers on its
 * scrubber and Frame.io's keyboard shortcuts, the request's details and
 * actions, and the live comment thread; a timestamp chip seeks the player
 * and C starts a comment at the current moment; I and O (or Set in, Set
 * out) make it a range, and Draw puts shapes on the frame that go with it.
 * Each comment's drawing shows over the video at its moment. Opening it
 * marks its notifications read. A request with revised takes shows one
 * version at a time (?v=N, else the latest) with that version's comments,
 * or two side by side in sync (&compare=M); the requester uploads new
 * versions from here.
 */
export function RequestRoute() {
  const { id = '' } = useParams();
  const { user } = useSession();
  const { data: request, loading } = useFeedbackRequest(id);
  const stored = useStoredVersions(request);
  const versions = useMemo(
    () => (request ? orderVersions(request, stored.data) : []),
    [request, stored.data],
  );
  // ?v=2 shows version 2 (else the latest); &compare=1 puts version 1 beside it.
  const [params, setParams] = useSearchParams();
  const asked = Number(params.get('v')) || null;
  const shown = versions.length > 0 ? pickVersion(versions, asked) : null;
  const againstNumber = Number(params.get('compare')) || null;
  const against = versions.find((v) => v.number === againstNumber && v.number !== shown?.number) ?? null;
  const videoUrl = useVideoUrl(shown);
  const againstUrl = useVideoUrl(against);
  const player = useRef<VideoPlayerHandle>(null);
  const [time, setTime] = useState(0);
  // The comments read, of every version; the shown version's mark its player.
  const [allComments, setAllComments] = useState<Comment[]>([]);
  const comments = useMemo(() => commentsOfVersion(allComments, shown?.number ?? 1), [allComments, shown]);
  // The file's frame rate (stored with the request, or read from the file) until playback measures it.
  const fileFps = useVideoFrameRate(shown, videoUrl);
  const [measuredFps, setMeasuredFps] = useState<number | null>(null);
  const fps = measuredFps ?? fileFps ?? 24;
  const composer = useRef<HTMLTextAreaElement>(null);
  const [marks, setMarks] = useState<RangeMarks>({ in: null, out: null });
  const [shapes, setShapes] = useState<DrawnShape[]>([]);
  useReadRequestNotifications(request ? request.id : null);
  const markers = useMemo(() => commentMarkers(comments), [comments]);
  const againstMarkers = useMemo(
    () => (against ? commentMarkers(commentsOfVersion(allComments, against.number)) : []),
    [allComments, against],
  );
  const annotations = useMemo<VideoAnnotation[]>(
    () =>
      comments.flatMap((c) =>
        c.deleted || c.videoTimestamp === null || c.drawing.length === 0
          ? []
          : [
              {
                id: c.id,
                time: c.videoTimestamp,
                end: c.videoEndTimestamp,
                shapes: c.drawing,
                label: `Drawing by ${c.userDisplayName} at ${formatCommentSpan(c.videoTimestamp, c.videoEndTimestamp)}`,
              },
            ],
      ),
    [comments],
  );
  const seek = useCallback((seconds: number) => player.current?.seek(seconds), []);
  const play = useCallback((from: number, until: number) => player.current?.play(from, until), []);
  // A drawing goes with the comment it was made for: posting it ends draw mode.
  const stopDrawing = useCallback(() => player.current?.stopDrawing(), []);
  const setIn = useCallback((t: number) => setMarks((m) => markIn(m, t)), []);
  const setOut = useCallback((t: number) => setMarks((m) => markOut(m, t)), []);
  // C: the player has paused at the moment; the composer takes the words.
  const commentHere = useCallback((seconds: number) => {
    setTime(seconds);
    composer.current?.focus();
  }, []);
  // Another version starts without the marks and drawing made on this one.
  const show = (number: number, compareWith: number | null) => {
    setMarks({ in: null, out: null });
    setShapes([]);
    setMeasuredFps(null);
    const next = new URLSearchParams(params);
    next.set('v', String(number));
    if (compareWith === null || compareWith === number) next.delete('compare');
    else next.set('compare', String(compareWith));
    setParams(next, { replace: true });
  };

  const side = ([v, src]: [VideoVersion, string]) => ({
    src,
    label: versionLabel(v.number),
    title: `${request?.title ?? ''} (${versionLabel(v.number)})`,
    markers: v.number === shown?.number ? markers : againstMarkers,
  });

  // A request with takes waits for them, so it opens on the latest (or the asked) version.
  if (loading || (request && request.versionCount > 1 && stored.loading))
    return <p className="text-zinc-400">Loading…</p>;
  if (!request || !user || !shown) {
    return (
      <p className="rounded-xl border border-zinc-800 bg-zinc-900/60 p-6 text-zinc-300">
        This feedback request does not exist, or it is not yours to see.{' '}
        <Link to="/requests" className="text-brand-400 hover:text-brand-300">
          Back to your requests
        </Link>
      </p>
    );
  }
  return (
    <TimecodeProvider fps={fps}>
      <div className="space-y-4">
        <Link
          to="/requests"
          className="inline-flex items-center gap-1.5 text-sm text-zinc-400 hover:text-white"
        >
          <ArrowLeft className="size-4" aria-hidden /> Requests
        </Link>
        <div className="grid grid-cols-1 gap-6 lg:grid-cols-[minmax(0,1fr)_26rem]">
          <div className="space-y-5 lg:sticky lg:top-20 lg:self-start">
            {versions.length > 1 || canAddVersion(request, user.uid) ? (
              <VersionBar
                request={request}
                versions={versions}
                shown={shown.number}
                comparing={against !== null}
                canUpload={canAddVersion(request, user.uid)}
                // While comparing, choosing the other side's version swaps the two.
                onShow={(n) => show(n, against && (against.number === n ? shown.number : against.number))}
                // Compare puts the version before beside the shown one (v2 beside v1).
                onCompare={(on) => {
                  const other =
                    versions.find((v) => v.number === shown.number - 1) ??
                    versions.find((v) => v.number !== shown.number);
                  show(shown.number, on ? (other?.number ?? null) : null);
                }}
              />
            ) : null}
            {against ? (
              <VideoCompare
                ref={player}
                key={`${against.number}-${shown.number}`}
                left={side(against.number < shown.number ? [against, againstUrl] : [shown, videoUrl])}
                right={side(against.number < shown.number ? [shown, videoUrl] : [against, againstUrl])}
                onTimeChange={setTime}
              />
            ) : (
              <VideoPlayer
                key={shown.number}
                ref={player}
                src={videoUrl}
                title={
                  versions.length > 1 ? `${request.title} (${versionLabel(shown.number)})` : request.title
                }
                markers={markers}
                annotations={annotations}
                draft={shapes}
                onDraftChange={setShapes}
                onMarkIn={setIn}
                onMarkOut={setOut}
                onTimeChange={setTime}
                onCommentKey={commentHere}
                frameRate={fileFps}
                onFrameRate={setMeasuredFps}
              />
            )}
            <RequestSummary request={request} uid={user.uid} />
          </div>
          <CommentThread
            requestId={request.id}
            uid={user.uid}
            version={shown.number}
            versionCount={versions.length}
            currentTime={time}
            onSeek={seek}
            onPlay={play}
            onComments={setAllComments}
            composerRef={composer}
            marks={marks}
            onMarks={setMarks}
            shapes={shapes}
            onShapes={setShapes}
            onPosted={stopDrawing}
          />
        </div>
      </div>
    </TimecodeProvider>
  );
}
