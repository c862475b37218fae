/** A page whose content is still to come: its title and one line. */
export function PlaceholderPage({ title, children }: { title: string; children?: React.ReactNode }) {
  return (
    <section className="space-y-2">
      <h1 className="text-2xl font-semibold tracking-tight text-white sm:text-3xl">{title}</h1>
      {children && <p className="text-zinc-400">{children}</p>}
    </section>
  );
}
