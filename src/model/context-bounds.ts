// The bounds of a score request's `context` (docs/api.md, "Trust scoring", and docs/rules.md,
// "Cost"): what a caller may send, and so the largest input a rule condition can be handed. The
// rules' save-time cost estimate is computed from these same numbers, so raising one raises the
// worst-case cost of every stored rule.
export const CONTEXT_BOUNDS = {
  /** the context serialised as JSON, in UTF-16 code units */
  maxSerialised: 16_384,
  /** nesting, the context object itself being level 1 */
  maxDepth: 5,
  /** characters of any string inside the context */
  maxString: 1_024,
  /** elements of any array inside the context */
  maxItems: 100,
  /** members of any object inside the context */
  maxMembers: 100,
} as const;

/**
 * The context members Vouch defines, each with a schema of its own (docs/api.md, "Trust scoring"); every
 * other member is the caller's free text, which rules may read.
 */
export const DEFINED_CONTEXT_MEMBERS: ReadonlySet<string> = new Set([
  'counterparty_id',
  'side',
  'payment_method',
  'country',
  'counterparty_country',
  'account_created_at',
  'trade_id',
  'linked_identifiers',
]);
