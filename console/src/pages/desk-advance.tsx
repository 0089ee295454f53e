// After a verdict, the desk moves on: with "Open the next review after a verdict" on (the default;
// the choice is kept in this browser), the next review due is claimed (POST /api/v1/reviews/next)
// and opened, with what the verdict did said at its top; with it off, or when none is left, the
// queue opens with the same message.
import { useState } from 'preact/hooks';
import { navigate, toProblem } from '../ui.tsx';
import { reviewsApi, reviewsChanged } from './reviews-api.ts';
import { flashOnQueue } from './reviews-parts.tsx';

const KEY = 'vouch.reviews.auto-advance';

/** A preference, not a credential: kept in localStorage (where a blocked storage leaves the default). */
function stored(): boolean {
  try {
    return localStorage.getItem(KEY) !== 'off';
  } catch {
    return true;
  }
}

let on = stored();

/** Goes on to the next review (or the queue) with `message`, what the verdict did. */
export async function afterVerdict(message: string): Promise<void> {
  if (!on) {
    flashOnQueue(message);
    navigate('/reviews');
    return;
  }
  try {
    const next = await reviewsApi.next();
    reviewsChanged();
    if (next) {
      flashOnQueue(`${message} The next review due is claimed for you.`);
      navigate(`/reviews/${encodeURIComponent(next.id)}`);
      return;
    }
    flashOnQueue(`${message} No open review is left to claim.`);
  } catch (err) {
    flashOnQueue(`${message} The next review could not be claimed: ${toProblem(err).detail}`);
  }
  navigate('/reviews');
}

/** The setting, beside the verdict. */
export function AutoAdvanceToggle() {
  const [checked, setChecked] = useState(on);
  return (
    <label class="inline small auto-advance">
      <input
        type="checkbox"
        name="auto_advance"
        checked={checked}
        onChange={(e) => {
          on = e.currentTarget.checked;
          setChecked(on);
          try {
            localStorage.setItem(KEY, on ? 'on' : 'off');
          } catch {
            // storage blocked: the choice holds for this page only
          }
        }}
      />
      Open the next review after a verdict
    </label>
  );
}
