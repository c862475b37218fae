/** Shown instead of the app when the Firebase configuration is incomplete (docs/product-spec.md §5). */
export function ConfigError({ missing }: { missing: string[] }) {
  return (
    <main className="mx-auto flex min-h-dvh max-w-xl flex-col justify-center gap-4 px-6">
      <h1 className="text-2xl font-semibold text-white">Loupe cannot start</h1>
      <p className="text-zinc-300">
        The backend configuration is incomplete. Set {missing.join(' and ')} in the build environment (see{' '}
        <code className="rounded bg-zinc-800 px-1">web/.env</code>) and rebuild.
      </p>
    </main>
  );
}
