// Vitest global setup for src/**/*.integration.test.ts: one `loupe serve`
// with the repository's rules, its URL provided to the tests as `loupeUrl`.
import { startLoupe } from './loupe.mjs';

export default async function setup({ provide }) {
  const loupe = await startLoupe({ rules: true });
  provide('loupeUrl', loupe.url);
  return () => loupe.stop();
}
