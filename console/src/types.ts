// The API's shapes, taken from the SDK's types (sdk/src/schema.d.ts, generated from the service's
// OpenAPI document by `npm run sdk:generate`), so a change to the API shows up here as a type error.
import type { components, operations } from '../../sdk/src/schema.d.ts';

type Schemas = components['schemas'];
type Created<Op extends keyof operations> = operations[Op]['responses'] extends {
  201: { content: { 'application/json': infer B } };
}
  ? B
  : never;

export type TokenResponse = Schemas['IssueTokenResponse'];
export type Decision = Schemas['GetDecisionResponse'];
export type Label = Schemas['LabelDecisionResponse'];
export type ScoreResult = Schemas['ScoreTrustResponse'];
export type Signal = ScoreResult['signals'][number];
export type DisputeResult = Schemas['AnalyzeDisputeResponse'];
export type Party = DisputeResult['parties']['buyer'];
export type EntityEvent = Schemas['ListEntityEventsResponse']['data'][number];
export type Key = Schemas['ApiKey'];
export type KeyWithSecret = Created<'createKey'>;
export type NewKey = Schemas['CreateKeyRequest'];
export type KeyStatus = NonNullable<NonNullable<operations['listKeys']['parameters']['query']>['status']>;
export type PolicyList = Schemas['ListPoliciesResponse'];
export type PolicyDetail = Schemas['CreatePolicyResponse'];
export type Webhook = Schemas['Webhook'];
export type Delivery = Schemas['WebhookDelivery'];
export type WebhookEvent = Schemas['CreateWebhookRequest']['events'][number];
export type NetworkPeerStatus = Schemas['GetNetworkStatusResponse']['peers'][number];
export type NetworkSync = Schemas['PostNetworkSyncResponse'];

export const isDispute = (d: Decision): boolean => d.kind === 'dispute_analysis';
export const LEVELS = ['low', 'medium', 'high', 'critical'] as const;
export const SEVERITIES = ['critical', 'high', 'medium', 'low'] as const;
export type EntityGraph = Schemas['GetTrustEntitiesEntityIdGraphResponse'];
