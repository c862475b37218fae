import { afterSignIn, signInPath } from './sign-in';

describe('signInPath', () => {
  it.each([
    ['/mentors/maya', '/auth?next=%2Fmentors%2Fmaya'],
    ['/requests/r1?checkout=done', '/auth?next=%2Frequests%2Fr1%3Fcheckout%3Ddone'],
    ['/', '/auth'],
    ['/auth?next=%2Fx', '/auth'],
  ])('%s → %s', (here, want) => {
    expect(signInPath(here)).toBe(want);
  });
});

describe('afterSignIn', () => {
  it.each([
    ['/mentors/maya', '/mentors/maya'],
    ['/requests/r1?checkout=done', '/requests/r1?checkout=done'],
    [null, '/'],
    ['https://evil.example/', '/'],
    ['//evil.example/', '/'],
    ['/\\evil.example', '/'],
    ['/auth', '/'],
    ['/auth?next=%2Fx', '/'],
  ])('%s → %s', (next, want) => {
    expect(afterSignIn(next)).toBe(want);
  });
});
