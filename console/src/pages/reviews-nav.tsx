// "Reviews 12" in the navigation: the open count from GET /api/v1/reviews/stats, read again on
// every navigation and whenever this tab claims or resolves a review.
import { useEffect, useState } from 'preact/hooks';
import { hasScope } from '../api.ts';
import { onReviewsChanged, reviewsApi } from './reviews-api.ts';

function useOpenCount(path: string): number | undefined {
  const [open, setOpen] = useState<number>();
  const [tick, setTick] = useState(0);
  useEffect(() => onReviewsChanged(() => setTick((t) => t + 1)), []);
  useEffect(() => {
    if (!hasScope('reviews:read')) return;
    let live = true;
    reviewsApi.stats().then(
      (s) => live && setOpen(s.open),
      () => {},
    );
    return () => void (live = false);
  }, [path, tick]);
  return open;
}

/** The link's text: "Reviews", then the open count (read out as "12 open"). */
export function ReviewsNavName({ path }: { path: string }) {
  const open = useOpenCount(path);
  return (
    <>
      Reviews
      {open !== undefined && (
        <>
          {' '}
          <span class={open > 0 ? 'nav-count' : 'nav-count zero'} data-open={open}>
            {open}
          </span>
          <span class="sr-only"> open</span>
        </>
      )}
    </>
  );
}
