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

// `vite build --mode console` builds the loupe console (console.html) into the
// Go package that embeds it, served by loupe at /_/console.
const consoleBuild = {
  base: '/_/console/',
  publicDir: false as const,
  build: {
    outDir: fileURLToPath(new URL('../internal/console/dist/app', import.meta.url)),
    emptyOutDir: true,
    rollupOptions: { input: fileURLToPath(new URL('./console.html', import.meta.url)) },
  },
};

// The app's libraries in chunks of their own, each under Vite's 500 kB
// warning, cached across app releases and fetched in parallel at start: the
// Firestore SDK (the largest, needed on every page), the rest of Firebase,
// and React with its router. The pages are split by route (src/app/routes).
const vendorChunks = {
  groups: [
    { name: 'firestore', test: /node_modules[\\/]@firebase[\\/](firestore|webchannel-wrapper)[\\/]/ },
    { name: 'firebase', test: /node_modules[\\/](@firebase|firebase|idb)[\\/]/ },
    { name: 'react', test: /node_modules[\\/](react|react-dom|react-router|scheduler)[\\/]/ },
  ],
};

export default defineConfig(({ mode }) => ({
  ...(mode === 'console'
    ? consoleBuild
    : { build: { rolldownOptions: { output: { codeSplitting: vendorChunks } } } }),
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
    // A guard against hangs, not a speed check: user-event drives every
    // keystroke through React, which takes seconds on a busy 2-core machine.
    testTimeout: 30_000,
  },
}));
