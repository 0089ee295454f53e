// The review queue's API (docs/api.md, "Reviews") as the console calls it, with its shapes taken
// from the SDK's generated types. The navigation's count: reviews-nav.tsx.
import { api, query } from '../api.ts';
import type { components, operations } from '../../../sdk/src/schema.d.ts';

export type Review = components['schemas']['Review'];
export type ReviewDetail = operations['getReview']['responses'][200]['content']['application/json'];
export type ReviewPage = components['schemas']['ListReviewsResponse'];
export type ReviewStats = components['schemas']['GetReviewStatsResponse'];
export type Resolve = components['schemas']['ResolveReviewRequest'];
/** GET /api/v1/desk/day: the desk's day (the dashboard's charts, the queue's analyst figures). */
export type DeskDay = components['schemas']['GetDeskDayResponse'];

export interface ReviewFilters {
  status?: string;
  outcome?: string;
  assignee?: string;
  entity_id?: string;
}

const enc = encodeURIComponent;

export const reviewsApi = {
  list: (f: ReviewFilters, cursor?: string | null, limit = 50) =>
    api<ReviewPage>('GET', `/api/v1/reviews${query({ ...f, limit, cursor })}`),
  get: (id: string) => api<ReviewDetail>('GET', `/api/v1/reviews/${enc(id)}`),
  stats: () => api<ReviewStats>('GET', '/api/v1/reviews/stats'),
  /** the review claimed, or undefined when none is open (204) */
  next: () => api<Review | undefined>('POST', '/api/v1/reviews/next'),
  claim: (id: string) => api<Review>('POST', `/api/v1/reviews/${enc(id)}/claim`),
  release: (id: string) => api<Review>('POST', `/api/v1/reviews/${enc(id)}/release`),
  day: (days = 30) => api<DeskDay>('GET', `/api/v1/desk/day${query({ days })}`),
  resolve: (id: string, body: Resolve) => api<Review>('POST', `/api/v1/reviews/${enc(id)}/resolve`, body),
};

// ---- the queue's order, as last listed: J/K on a review's page move through it
let order: string[] = [];
export const rememberOrder = (ids: string[]): void => void (order = ids);
/** The review `step` places from `id` in the queue as last listed, if any. */
export function neighbour(id: string, step: 1 | -1): string | undefined {
  const at = order.indexOf(id);
  return at < 0 ? undefined : order[at + step];
}

/** Tells the navigation's count that a review was claimed or resolved. */
const changed = new Set<() => void>();
export const reviewsChanged = (): void => changed.forEach((l) => l());
export function onReviewsChanged(l: () => void): () => void {
  changed.add(l);
  return () => void changed.delete(l);
}
