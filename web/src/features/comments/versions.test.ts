import type { Comment } from '@/types/request';
import { carryCandidates, commentsOfVersion } from './versions';

const comment = (id: string, extra: Partial<Comment> = {}): Comment => ({
  id,
  userId: 'maya',
  userDisplayName: 'Maya',
  userProfilePicture: null,
  content: id,
  mediaUrl: '',
  mediaType: 'text',
  timestamp: null,
  videoTimestamp: 1,
  videoEndTimestamp: null,
  drawing: [],
  resolved: false,
  editedAt: null,
  version: 1,
  carriedFrom: null,
  isReply: false,
  repliesCount: 0,
  deleted: false,
  ...extra,
});

describe('commentsOfVersion', () => {
  it('keeps the comments about one version', () => {
    const all = [comment('a'), comment('b', { version: 2 }), comment('c')];
    expect(commentsOfVersion(all, 1).map((c) => c.id)).toEqual(['a', 'c']);
    expect(commentsOfVersion(all, 2).map((c) => c.id)).toEqual(['b']);
    expect(commentsOfVersion(all, 3)).toEqual([]);
  });
});

describe('carryCandidates', () => {
  it('offers the open comments of earlier versions, in thread order', () => {
    const all = [
      comment('open'),
      comment('resolved', { resolved: true }),
      comment('deleted', { deleted: true }),
      comment('reply', { isReply: true, parentCommentId: 'open' }),
      comment('pending', { pending: true }),
      comment('on-v2', { version: 2 }),
      comment('later'),
    ];
    expect(carryCandidates(all, 2).map((c) => c.id)).toEqual(['open', 'later']);
    expect(carryCandidates(all, 1)).toEqual([]);
  });
  it('leaves out a comment once carried, and offers its copy for the next version', () => {
    const all = [comment('a'), comment('b'), comment('a2', { version: 2, carriedFrom: 'a' })];
    expect(carryCandidates(all, 2).map((c) => c.id)).toEqual(['b']);
    expect(carryCandidates(all, 3).map((c) => c.id)).toEqual(['b', 'a2']);
  });
  it('still offers a comment carried only to a later version than the target', () => {
    const all = [comment('a'), comment('a3', { version: 3, carriedFrom: 'a' })];
    expect(carryCandidates(all, 2).map((c) => c.id)).toEqual(['a']);
  });
});
