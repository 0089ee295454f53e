// The review queue's API (docs/api.md, "Reviews") as the console calls it, with its shapes taken
// from the SDK's generated types. The navigation's count: reviews-nav.tsx.
import { vouch } from '../api-client.ts';
import type { components, operations } from '../../../sdk/src/schema.d.ts';

export type Review = components['schemas']['Review'];
export type ReviewDetail = operations['getReview']['responses'][200]['content']['application/json'];
export type ReviewStats = components['schemas']['GetReviewStatsResponse'];
export type Resolve = components['schemas']['ResolveReviewRequest'];
/** GET /api/v1/desk/day: the desk's day (the dashboard's charts, the queue's analyst figures). */
export type DeskDay = components['schemas']['GetDeskDayResponse'];

/** The queue's filters, as GET /api/v1/reviews takes them. */
export type ReviewFilters = Omit<NonNullable<operations['listReviews']['parameters']['query']>, 'cursor' | 'limit'>;

const review = (id: string) => ({ params: { path: { id } } });

export const reviewsApi = {
  list: (f: ReviewFilters, cursor?: string | null, limit = 50) =>
    vouch.GET('/api/v1/reviews', { params: { query: { ...f, limit, cursor: cursor ?? undefined } } }),
  get: (id: string) => vouch.GET('/api/v1/reviews/{id}', review(id)),
  stats: () => vouch.GET('/api/v1/reviews/stats'),
  /** the review claimed, or undefined when none is open (204); no filters are sent */
  next: () => vouch.POST('/api/v1/reviews/next'),
  claim: (id: string) => vouch.POST('/api/v1/reviews/{id}/claim', review(id)),
  release: (id: string) => vouch.POST('/api/v1/reviews/{id}/release', review(id)),
  day: (days = 30) => vouch.GET('/api/v1/desk/day', { params: { query: { days } } }),
  resolve: (id: string, body: Resolve) => vouch.POST('/api/v1/reviews/{id}/resolve', { ...review(id), body }),
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
