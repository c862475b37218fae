import { badgeText, bellView, unreadCount, type AppNotification } from './notification-rules';

const item = (id: number, read = false): AppNotification => ({
  id: String(id),
  userId: 'u',
  type: 'feedback_request',
  title: `t${id}`,
  message: 'm',
  data: {},
  read,
  createdAt: null,
});

describe('badgeText', () => {
  it.each([
    [0, null],
    [1, '1'],
    [9, '9'],
    [10, '9+'],
    [50, '9+'],
  ])('%i unread shows %j', (n, want) => expect(badgeText(n)).toBe(want));
});

describe('bellView', () => {
  it('shows at most 5 items and links to the full list only when there are more', () => {
    expect(bellView([1, 2, 3, 4, 5].map((i) => item(i)))).toMatchObject({ viewAll: false });
    const six = bellView([1, 2, 3, 4, 5, 6].map((i) => item(i)));
    expect(six.shown.map((n) => n.id)).toEqual(['1', '2', '3', '4', '5']);
    expect(six.viewAll).toBe(true);
  });
});

it('counts unread items', () => {
  expect(unreadCount([item(1), item(2, true), item(3)])).toBe(2);
});
