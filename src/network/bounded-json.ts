// JSON with a bound on nesting, checked by one linear scan before JSON.parse sees the text, so a
// deeply nested answer costs a scan of its (already size-bounded) bytes and nothing more.

/** Parses `text`, refusing arrays and objects nested deeper than `maxDepth`; throws on either. */
export function parseBounded(text: string, maxDepth: number): unknown {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > maxDepth) throw new Error(`nested deeper than ${maxDepth}`);
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return JSON.parse(text) as unknown;
}
