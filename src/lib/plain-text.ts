// Text a person reads in the console or a log (names, descriptions, list values): no control
// characters and no invisible formatting ones — bidi overrides (U+202E shows "enilced" as
// "decline"), zero-width spaces and joiners (two values that look alike but differ) — which
// make what is shown differ from what is stored. Line breaks and tabs only where text has lines.
const HIDDEN = /[\p{Cc}\p{Cf}]/u;
const HIDDEN_BUT_LINES = /(?![\n\t])[\p{Cc}\p{Cf}]/u;

export function hasHiddenCharacters(text: string, { lines = false }: { lines?: boolean } = {}): boolean {
  return (lines ? HIDDEN_BUT_LINES : HIDDEN).test(text);
}

export const HIDDEN_CHARACTERS_MESSAGE =
  'must not contain control characters or invisible formatting ones (bidi overrides, zero-width characters)';
