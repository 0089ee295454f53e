// The pieces both review pages show: when a review is due (overdue in red), its status, the
// "Next" action that claims the review due first and opens it, and the queue's one-time message.
import { useState } from 'preact/hooks';
import { currentSession, type ApiProblem } from '../api.ts';
import { fmtDate, navigate, toProblem } from '../ui.tsx';
import { reviewsApi, reviewsChanged, type Review } from './reviews-api.ts';

// A message the queue shows once, after a review's page resolved one and came back.
let flash: string | undefined;
export const flashOnQueue = (message: string): void => void (flash = message);
/** The message, once: reading it clears it. */
export function takeFlash(): string | undefined {
  const m = flash;
  flash = undefined;
  return m;
}

/** Claims the review due first and opens it: shared by the queue and a review's page. */
export function useNext(): { busy: boolean; error?: ApiProblem; none: boolean; next: () => void } {
  const [state, setState] = useState<{ busy: boolean; error?: ApiProblem; none: boolean }>({
    busy: false,
    none: false,
  });
  const next = () => {
    if (state.busy) return;
    setState({ busy: true, none: false });
    reviewsApi.next().then(
      (r) => {
        setState({ busy: false, none: !r });
        reviewsChanged();
        if (r) navigate(`/reviews/${encodeURIComponent(r.id)}`);
      },
      (err: unknown) => setState({ busy: false, error: toProblem(err), none: false }),
    );
  };
  return { ...state, next };
}

/** "20 min", "3 h", "2 days": how far `at` is from now, either way. */
export function span(at: string, now = Date.now()): string {
  const m = Math.round(Math.abs(new Date(at).getTime() - now) / 60_000);
  return m < 60 ? `${m} min` : m < 48 * 60 ? `${Math.round(m / 60)} h` : `${Math.round(m / 1440)} days`;
}

/** When a review is due: "in 3 h", or in red "Overdue by 20 min"; the date itself on hover. */
export function Due({ r }: { r: Review }) {
  if (r.status === 'resolved') return <span class="muted">{fmtDate(r.due_at)}</span>;
  return r.overdue ? (
    <span class="due overdue" title={fmtDate(r.due_at)}>
      <strong>Overdue</strong> by {span(r.due_at)}
    </span>
  ) : (
    <span class="due" title={fmtDate(r.due_at)}>
      in {span(r.due_at)}
    </span>
  );
}

/** Open, claimed by whom (and till when), or resolved and how. */
/** Who holds or resolved a review, by name (a person's, or a machine client's); the id when the name is unknown. */
export const claimant = (r: Pick<Review, 'assignee' | 'assignee_name'>): string => r.assignee_name ?? r.assignee ?? '';

export function ReviewStatus({ r }: { r: Review }) {
  const me = currentSession()?.actorId;
  if (r.status === 'resolved') {
    return (
      <>
        <span class={`badge resolution-${r.resolution}`}>{r.resolution === 'decline' ? 'declined' : 'approved'}</span>
        {r.label && (
          <>
            {' '}
            <span class={`badge label-${r.label}`}>{r.label}</span>
          </>
        )}
      </>
    );
  }
  if (r.status === 'claimed')
    return (
      <span
        class={r.assignee === me ? 'badge status-claimed' : 'badge status-claimed claimant'}
        title={`${r.assignee === me ? '' : `${claimant(r)} (${r.assignee}) `}until ${fmtDate(r.claim_expires_at)}`}
      >
        {r.assignee === me ? 'claimed by you' : `claimed by ${claimant(r)}`}
      </span>
    );
  return <span class="badge status-open">open</span>;
}
