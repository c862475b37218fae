import { availableActions, fromMinorUnits, checkVideo, videoPath } from './request-rules';

describe('checkVideo', () => {
  it('takes videos up to 1 GB', () => {
    expect(checkVideo({ type: 'video/mp4', size: 1024 })).toBeNull();
    expect(checkVideo({ type: 'video/quicktime', size: 1024 ** 3 })).toBeNull();
  });
  it('explains what is wrong', () => {
    expect(checkVideo({ type: 'image/png', size: 10 })).toBe('Choose a video file (MP4, MOV or WebM).');
    expect(checkVideo({ type: 'video/mp4', size: 0 })).toBe('That video is empty.');
    expect(checkVideo({ type: 'video/mp4', size: 1024 ** 3 + 1 })).toBe('Videos can be up to 1 GB.');
  });
});

describe('videoPath', () => {
  it('keeps the upload under the owner, with a safe name', () => {
    expect(videoPath('u1', 42, 'My solo (take 2).mp4')).toBe('videos/u1/42_My_solo_take_2_.mp4');
    expect(videoPath('u1', 42, '../../etc')).toBe('videos/u1/42_etc');
  });
});

describe('availableActions', () => {
  const request = { mentorId: 'm', requesterId: 'r', paymentStatus: 'paid' as const, dueAt: null };
  it('lets the mentor only decline a pending request until it is paid', () => {
    expect(
      availableActions({ ...request, paymentStatus: 'unpaid', status: 'pending' }, 'm').map((a) => a.label),
    ).toEqual(['Decline']);
  });
  it('lets the mentor accept or decline a paid pending request, then complete it', () => {
    expect(availableActions({ ...request, status: 'pending' }, 'm').map((a) => a.label)).toEqual([
      'Accept',
      'Decline',
    ]);
    expect(availableActions({ ...request, status: 'accepted' }, 'm')).toEqual([
      { label: 'Mark completed', status: 'completed' },
    ]);
    expect(availableActions({ ...request, status: 'completed' }, 'm')).toEqual([]);
  });
  it('lets the requester cancel an accepted request for a refund once it is overdue', () => {
    const due = { ...request, status: 'accepted' as const, dueAt: new Date('2026-03-04T10:00:00Z') };
    expect(availableActions(due, 'r', new Date('2026-03-04T09:59:00Z'))).toEqual([]);
    expect(availableActions(due, 'r', new Date('2026-03-04T10:01:00Z'))).toEqual([
      { label: 'Cancel for a refund', status: 'cancelled' },
    ]);
    expect(availableActions(due, 'm', new Date('2026-03-04T10:01:00Z'))).toEqual([
      { label: 'Mark completed', status: 'completed' },
    ]);
  });
  it('lets the requester cancel while pending only', () => {
    expect(availableActions({ ...request, status: 'pending' }, 'r')).toEqual([
      { label: 'Cancel request', status: 'cancelled' },
    ]);
    expect(availableActions({ ...request, status: 'accepted' }, 'r')).toEqual([]);
    expect(availableActions({ ...request, status: 'pending' }, 'someone')).toEqual([]);
  });
});

describe('fromMinorUnits', () => {
  it('reads cents, except for zero-decimal currencies', () => {
    expect(fromMinorUnits(3897, 'EUR')).toBe(38.97);
    expect(fromMinorUnits(3127, 'JPY')).toBe(3127);
  });
});
