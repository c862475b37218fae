/** The storage key of the theme (docs/product-spec.md §9); the value has no effect, the theme is always dark. */
export const THEME_STORAGE_KEY = 'theme';

/** The one theme (docs/product-spec.md §1). */
export const THEME = 'dark';

/**
 * Records the forced theme under its key, as the framework's theme provider
 * does; whatever was stored there before changes nothing. Storage that
 * refuses writes (private mode, quota) is ignored.
 */
export function recordForcedTheme(
  storage: Pick<Storage, 'setItem'> | undefined = globalThis.localStorage,
): void {
  try {
    storage?.setItem(THEME_STORAGE_KEY, THEME);
  } catch {
    // The theme is forced anyway.
  }
}
