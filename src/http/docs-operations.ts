// What the OpenAPI document (docs.ts) says of each operation beyond its schemas: a stable,
// readable operationId, a description naming the scope and role it requires, and the global list
// of tags with what each groups.

type Json = Record<string, unknown>;

/** Stable, readable operationIds ("METHOD path"); a route not listed gets one derived from its method and path. */
const OPERATION_IDS: Record<string, string> = {
  'POST /api/v1/auth/token': 'issueToken',
  'GET /.well-known/jwks.json': 'getJwks',
  'GET /.well-known/oauth-authorization-server': 'getAuthorizationServerMetadata',
  'GET /api/v1/keys': 'listKeys',
  'POST /api/v1/keys': 'createKey',
  'GET /api/v1/keys/{key_id}': 'getKey',
  'DELETE /api/v1/keys/{key_id}': 'deactivateKey',
  'POST /api/v1/keys/{key_id}/rotate': 'rotateKey',
  'POST /api/v1/trust/events': 'recordTrustEvents',
  'POST /api/v1/trust/score': 'scoreTrust',
  'POST /api/v1/trust/score/batch': 'scoreTrustBatch',
  'GET /api/v1/trust/entities/{entity_id}': 'getEntity',
  'DELETE /api/v1/trust/entities/{entity_id}': 'eraseEntity',
  'GET /api/v1/trust/entities/{entity_id}/events': 'listEntityEvents',
  'POST /api/v1/dispute/analyze': 'analyzeDispute',
  'GET /api/v1/decisions/{id}': 'getDecision',
  'GET /api/v1/decisions': 'listDecisions',
  'POST /api/v1/decisions/{id}/label': 'labelDecision',
  'GET /api/v1/policies': 'listPolicies',
  'POST /api/v1/policies': 'createPolicy',
  'GET /api/v1/policies/{version}': 'getPolicy',
  'POST /api/v1/policies/fit': 'fitPolicy',
  'POST /api/v1/policies/{version}/backtest': 'backtestPolicy',
  'POST /api/v1/policies/{version}/activate': 'activatePolicy',
  'POST /api/v1/policies/{version}/shadow': 'shadowPolicy',
  'DELETE /api/v1/policies/shadow': 'clearShadowPolicy',
  'GET /api/v1/policies/{version}/report': 'getPolicyReport',
  'POST /api/v1/webhooks': 'createWebhook',
  'GET /api/v1/webhooks': 'listWebhooks',
  'GET /api/v1/webhooks/{webhook_id}': 'getWebhook',
  'DELETE /api/v1/webhooks/{webhook_id}': 'deleteWebhook',
  'GET /api/v1/webhooks/{webhook_id}/deliveries': 'listWebhookDeliveries',
  'POST /api/v1/webhooks/{webhook_id}/deliveries/{delivery_id}/retry': 'retryWebhookDelivery',
};

const VERBS: Record<string, string> = { get: 'get', post: 'post', put: 'put', patch: 'patch', delete: 'delete' };

export function operationIdFor(method: string, path: string): string {
  const known = OPERATION_IDS[`${method.toUpperCase()} ${path}`];
  if (known) return known;
  const words = path
    .replace(/^\/api\/v1\//, '')
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean);
  return (
    (VERBS[method.toLowerCase()] ?? method.toLowerCase()) + words.map((w) => w[0]!.toUpperCase() + w.slice(1)).join('')
  );
}

/** What each tag groups, for the document's global tag list. */
const TAG_DESCRIPTIONS: Record<string, string> = {
  auth: 'OAuth 2.0 client credentials, signing keys and server metadata',
  keys: 'API keys: issue, list, rotate, deactivate',
  trust: 'Scoring counterparties, recording their history, erasure',
  disputes: 'Dispute analysis: a recommendation, risk flags and the evidence to ask for',
  audit: 'Stored decisions and their labels',
  policies: 'Scoring policies: versions, fitting, backtests, activation, shadow',
  webhooks: 'Event subscriptions and their deliveries',
  rules: 'Rules on top of the score: outcomes and caps, versions, shadow, checks and stats',
  lists: 'Typed lists the rules read, and their entries',
  changes: 'Four eyes: the settings, and changes waiting for a second person',
  ops: 'Health, readiness and metrics',
};

export function operationDescription(
  summary: unknown,
  config: { scope?: string; role?: string; peer?: boolean } | undefined,
): string {
  const what = typeof summary === 'string' && summary ? `${summary.replace(/\.$/, '')}.` : '';
  // A peer route takes no API credential: a member's signed request (docs/network.md), checked by the route itself.
  if (config?.peer) return `${what} For network members: a signed peer request, no API credential.`.trim();
  if (!config?.scope) return `${what} Public: no credentials.`.trim();
  const role = config.role ? ` and role ${config.role === 'admin' ? 'admin' : `${config.role} or admin`}` : '';
  return `${what} Requires the \`${config.scope}\` scope${role} (an API key must have been issued with it).`.trim();
}

export function addTags(doc: Json): void {
  const used = new Set<string>();
  for (const item of Object.values((doc.paths ?? {}) as Record<string, Record<string, Json>>)) {
    for (const op of Object.values(item)) for (const tag of (op.tags as string[] | undefined) ?? []) used.add(tag);
  }
  doc.tags = [...used].sort().map((name) => ({ name, description: TAG_DESCRIPTIONS[name] ?? name }));
}
