import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// Integration tests: app modules (the comment API) through the Firebase JS SDK
// in Node against a real `loupe serve` that e2e/support/vitest-loupe.mjs starts.
export default defineConfig({
  resolve: { alias: { '@': fileURLToPath(new URL('./src', import.meta.url)) } },
  test: {
    environment: 'node',
    include: ['src/**/*.integration.test.ts'],
    globalSetup: ['./e2e/support/vitest-loupe.mjs'],
    globals: true,
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
