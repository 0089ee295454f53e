// JSON Merge Patch (RFC 7396): a partial document that says only what changes. An object merges
// member by member, null removes a member, anything else replaces it. Over parsed JSON only; a
// member named like an object's prototype is refused, so a patch cannot reach one.
const FORBIDDEN = new Set(['__proto__', 'constructor', 'prototype']);

export class MergePatchError extends Error {}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export function mergePatch(target: unknown, patch: unknown, path = ''): unknown {
  if (!isObject(patch)) return patch;
  const out: Record<string, unknown> = isObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (FORBIDDEN.has(key)) throw new MergePatchError(`${path}${key} cannot be patched`);
    if (value === null) delete out[key];
    else out[key] = mergePatch(out[key], value, `${path}${key}.`);
  }
  return out;
}
