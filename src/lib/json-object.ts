// A stored JSON text read as an object: what the decisions' text columns hold (request, result,
// rule_inputs). A row written by an older version, or damaged, reads as null, never as a throw.

/** The object `text` holds, or null for null, empty or non-JSON text and for JSON that is not an object. */
export function parseJsonObject(text: string | null | undefined): Record<string, unknown> | null {
  if (!text) return null;
  try {
    const v = JSON.parse(text) as unknown;
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
