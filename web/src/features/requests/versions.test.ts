import type { VideoVersion } from '@/types/request';
import { canAddVersion, latestVideoPath, orderVersions, pickVersion, versionLabel } from './versions';

const request = {
  videoPath: 'videos/sam/1_take.mp4',
  videoUrl: 'https://example.test/1',
  videoDuration: 8,
  videoFrameRate: 30,
  createdAt: null,
};
const take = (number: number, path = `videos/sam/${number}_take.mp4`): VideoVersion => ({
  number,
  videoPath: path,
  videoUrl: '',
  videoDuration: null,
  videoFrameRate: null,
  note: '',
  createdAt: null,
});

describe('orderVersions', () => {
  it('puts the request’s own video first as v1, then the takes by number', () => {
    const versions = orderVersions(request, [take(3), take(2)]);
    expect(versions.map((v) => [v.number, v.videoPath])).toEqual([
      [1, 'videos/sam/1_take.mp4'],
      [2, 'videos/sam/2_take.mp4'],
      [3, 'videos/sam/3_take.mp4'],
    ]);
    expect(versions[0]).toMatchObject({ videoDuration: 8, videoFrameRate: 30, note: '' });
  });
  it('is v1 alone for a request without takes (every request stored before versions)', () => {
    expect(orderVersions(request, []).map((v) => v.number)).toEqual([1]);
  });
  it('leaves out numbers it cannot place: below 2, not whole, or seen before', () => {
    const versions = orderVersions(request, [
      take(1, 'x'),
      take(2.5),
      take(Number.NaN),
      take(2),
      take(2, 'y'),
    ]);
    expect(versions.map((v) => [v.number, v.videoPath])).toEqual([
      [1, 'videos/sam/1_take.mp4'],
      [2, 'videos/sam/2_take.mp4'],
    ]);
  });
});

describe('pickVersion', () => {
  const versions = orderVersions(request, [take(2), take(3)]);
  it('is the asked version when the request has it, else the latest', () => {
    expect(pickVersion(versions, 2).number).toBe(2);
    expect(pickVersion(versions, null).number).toBe(3);
    expect(pickVersion(versions, 9).number).toBe(3);
  });
});

describe('canAddVersion', () => {
  it('lets the requester add a take while the request is open', () => {
    expect(canAddVersion({ requesterId: 'sam', status: 'pending' }, 'sam')).toBe(true);
    expect(canAddVersion({ requesterId: 'sam', status: 'accepted' }, 'sam')).toBe(true);
    expect(canAddVersion({ requesterId: 'sam', status: 'accepted' }, 'maya')).toBe(false);
    for (const status of ['completed', 'declined', 'cancelled'] as const) {
      expect(canAddVersion({ requesterId: 'sam', status }, 'sam')).toBe(false);
    }
  });
});

describe('latestVideoPath and versionLabel', () => {
  it('name the latest take, v1’s video until there is one', () => {
    expect(latestVideoPath({ videoPath: 'a', latestVideoPath: '' })).toBe('a');
    expect(latestVideoPath({ videoPath: 'a', latestVideoPath: 'b' })).toBe('b');
    expect(versionLabel(2)).toBe('v2');
  });
});
