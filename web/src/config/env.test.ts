import { readEnv } from './env';

const full = {
  VITE_FIREBASE_API_KEY: 'k',
  VITE_FIREBASE_PROJECT_ID: 'p',
  VITE_USE_EMULATORS: 'true',
};

describe('readEnv', () => {
  it('accepts a configuration with an API key and a project id', () => {
    const result = readEnv(full);
    expect(result).toMatchObject({ ok: true, env: { apiKey: 'k', projectId: 'p', useEmulators: true } });
  });

  it('refuses to start without an API key or a project id, naming both', () => {
    expect(readEnv({})).toEqual({
      ok: false,
      missing: ['VITE_FIREBASE_API_KEY', 'VITE_FIREBASE_PROJECT_ID'],
    });
    expect(readEnv({ ...full, VITE_FIREBASE_PROJECT_ID: '  ' })).toEqual({
      ok: false,
      missing: ['VITE_FIREBASE_PROJECT_ID'],
    });
  });
});
