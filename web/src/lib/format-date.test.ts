import { formatNotificationTime } from './format-date';

const now = new Date('2025-03-10T12:00:00Z');

describe('formatNotificationTime', () => {
  it.each([
    ['no timestamp', null, 'Just now'],
    ['a few seconds ago', new Date('2025-03-10T11:59:50Z'), 'less than a minute ago'],
    ['three hours ago', new Date('2025-03-10T09:00:00Z'), 'about 3 hours ago'],
    ['23 hours ago', new Date('2025-03-09T13:00:00Z'), 'about 23 hours ago'],
    ['exactly a day ago', new Date('2025-03-09T12:00:00Z'), 'Mar 9, 2025'],
    ['months ago', new Date(2025, 0, 5, 15, 30), 'Jan 5, 2025'],
  ])('%s reads %j', (_, date, want) => {
    expect(formatNotificationTime(date, now)).toBe(want);
  });
});
