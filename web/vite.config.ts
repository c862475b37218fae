/// <reference types="vitest/config" />
import react from '@vitejs/plugin-react';
import tailwindcss from '@tailwindcss/vite';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

// The dev server proxies the emulated services to a running `loupe serve`
// (make run) so the app and the backend share one origin, as in production.
const loupe = process.env.LOUPE_URL ?? 'http://127.0.0.1:8080';
const proxied = [
  '/v1',
  '/v0',
  '/google.firestore.v1.Firestore',
  '/identitytoolkit.googleapis.com',
  '/securetoken.googleapis.com',
  '/emulator',
  '/api',
  '/__',
  '/_next',
];

export default defineConfig({
  plugins: [react(), tailwindcss()],
  resolve: { alias: { '@': fileURLToPath(new URL('./src', import.meta.url)) } },
  server: {
    proxy: Object.fromEntries(proxied.map((path) => [path, { target: loupe, ws: false }])),
  },
  test: {
    environment: 'jsdom',
    setupFiles: ['./src/test/setup.ts'],
    include: ['src/**/*.test.{ts,tsx}'],
    exclude: ['src/**/*.integration.test.ts'],
    globals: true,
    css: false,
  },
});
