import { recordForcedTheme } from './theme';

describe('recordForcedTheme', () => {
  it("writes 'dark' under the key 'theme', whatever was there", () => {
    localStorage.setItem('theme', 'light');
    recordForcedTheme();
    expect(localStorage.getItem('theme')).toBe('dark');
  });
  it('ignores storage that refuses writes', () => {
    expect(() =>
      recordForcedTheme({
        setItem: () => {
          throw new Error('QuotaExceededError');
        },
      }),
    ).not.toThrow();
  });
});
