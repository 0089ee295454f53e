// Reading a policy document (docs/api.md, "Policies"): the schema of policy.ts, then what JSON
// Schema cannot say (monotone weights and shapes, ordered thresholds and tiers, unique assets),
// each problem naming its field; and loading the built-in policy or VOUCH_POLICY_FILE.
import { readFileSync } from 'node:fs';
import { Value } from 'typebox/value';
import {
  DEFAULT_POLICY,
  PolicySchema,
  SIGNAL_DIRECTIONS,
  SIGNAL_NAMES,
  deepFreeze,
  type Policy,
  type SignalName,
} from './policy.ts';
import { pairProblems } from './pairs.ts';
import { tierProblems } from './new-accounts.ts';
import { outcomeProblems } from './outcome-policy.ts';

interface SchemaError {
  keyword: string;
  schemaPath: string;
  instancePath: string;
  params: Record<string, unknown>;
  message: string;
}

function describeSchemaError(e: SchemaError): string {
  const at = e.instancePath || '/';
  if (e.keyword === 'additionalProperties') {
    const names = (e.params.additionalProperties as string[] | undefined) ?? [];
    return names.map((n) => `${e.instancePath}/${n}: unknown field`).join('; ');
  }
  if (e.keyword === 'required') {
    const names = (e.params.requiredProperties as string[] | undefined) ?? [];
    return names.map((n) => `${e.instancePath}/${n}: required field missing`).join('; ');
  }
  return `${at}: ${e.message}`;
}

/** Checks that JSON Schema cannot express; each returns a problem naming the field, or null. */
function semanticProblems(p: Policy): string[] {
  const problems: string[] = [];
  // The version is shown to operators and stamped on every decision: no control characters.
  if (/\p{Cc}/u.test(p.version)) problems.push('/version: must not contain control characters');
  for (const name of SIGNAL_NAMES) {
    const w = p.weights[name];
    if (SIGNAL_DIRECTIONS[name] === 'risk' && w < 0) {
      problems.push(`/weights/${name}: must be >= 0 (risk signal; a negative weight would break monotonicity)`);
    }
    if (SIGNAL_DIRECTIONS[name] === 'protective' && w > 0) {
      problems.push(`/weights/${name}: must be <= 0 (protective signal; a positive weight would break monotonicity)`);
    }
  }
  for (const [name, shape] of Object.entries(p.shapes ?? {}) as [
    SignalName,
    NonNullable<Policy['shapes']>[SignalName],
  ][]) {
    if (shape === undefined) continue;
    const at = `/shapes/${name}`;
    if (shape.slopes.length !== shape.knots.length)
      problems.push(`${at}/slopes: must have one slope per knot (${shape.knots.length})`);
    shape.knots.forEach((k, i) => {
      if (i > 0 && !(k > shape.knots[i - 1]!))
        problems.push(`${at}/knots/${i}: must be greater than knots[${i - 1}] (knots are strictly increasing)`);
    });
    shape.slopes.forEach((s, i) => {
      if (SIGNAL_DIRECTIONS[name] === 'risk' && s < 0)
        problems.push(`${at}/slopes/${i}: must be >= 0 (risk signal; a negative slope would break monotonicity)`);
      if (SIGNAL_DIRECTIONS[name] === 'protective' && s > 0)
        problems.push(`${at}/slopes/${i}: must be <= 0 (protective signal; a positive slope would break monotonicity)`);
    });
  }
  problems.push(...pairProblems(p.pairs));
  const { medium, high, critical } = p.thresholds;
  if (!(medium < high)) problems.push(`/thresholds/high: must be greater than thresholds.medium (${medium})`);
  if (!(high < critical)) problems.push(`/thresholds/critical: must be greater than thresholds.high (${high})`);
  if (p.newAccounts) problems.push(...tierProblems(p.newAccounts));
  problems.push(...outcomeProblems(p));
  const seen = new Set<string>();
  p.cryptoAssets.forEach((a, i) => {
    if (seen.has(a)) problems.push(`/cryptoAssets/${i}: duplicate asset ${a}`);
    seen.add(a);
  });
  return problems;
}

/** Validates a parsed policy document; throws an Error with a one-line message naming the field(s). */
export function validatePolicy(doc: unknown, source = 'policy'): Policy {
  const errors = [...Value.Errors(PolicySchema, doc)] as SchemaError[];
  // An unknown property is reported twice (as a `false` sub-schema and as additionalProperties);
  // keep the one that says "unknown field".
  const useful = errors.filter((e) => !(e.keyword === 'boolean' && e.schemaPath.endsWith('/additionalProperties')));
  if (useful.length > 0) {
    const shown = useful.slice(0, 3).map(describeSchemaError).join('; ');
    const more = useful.length > 3 ? ` (and ${useful.length - 3} more)` : '';
    throw new Error(`invalid ${source}: ${shown}${more}`);
  }
  const policy = doc as Policy;
  const problems = semanticProblems(policy);
  if (problems.length > 0) throw new Error(`invalid ${source}: ${problems.join('; ')}`);
  return policy;
}

const oneLine = (s: string): string => s.replace(/\s+/g, ' ').trim();

/**
 * The built-in policy, or the JSON document at `path` (e.g. from VOUCH_POLICY_FILE), validated.
 * Throws an Error whose message is one line naming what is wrong.
 */
export function loadPolicy(path?: string): Policy {
  if (path === undefined) return validatePolicy(DEFAULT_POLICY, 'built-in policy');
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? oneLine(String(err));
    throw new Error(`cannot read policy file ${path}: ${code}`);
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new Error(`invalid policy file ${path}: not valid JSON (${oneLine((err as Error).message)})`);
  }
  return deepFreeze(validatePolicy(doc, `policy file ${path}`));
}
