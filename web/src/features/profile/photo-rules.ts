/** Largest profile photo (what storage.rules allow under avatars/). */
export const MAX_PHOTO_BYTES = 5 * 1024 * 1024;

/** The image types a profile photo may be (what the image optimiser decodes). */
export const PHOTO_TYPES = ['image/jpeg', 'image/png', 'image/gif', 'image/webp'];

/** Why a file cannot be a profile photo, in words for the person, or null when it can. */
export function checkPhoto(file: { name: string; type: string; size: number }): string | null {
  if (!PHOTO_TYPES.includes(file.type)) {
    return `“${file.name}” is not an image. Choose a JPEG, PNG, GIF or WebP photo.`;
  }
  if (file.size > MAX_PHOTO_BYTES) {
    return `“${file.name}” is ${(file.size / 1024 / 1024).toFixed(1)} MB. Photos can be up to 5 MB.`;
  }
  return null;
}
