// A policy's economics (docs/api.md, "Decisions by money") in plain words, and the panel where a
// writer changes them (the form: policy-economics-form.tsx): a new candidate derived from the
// version, activated the usual way.
import './money.css';
import { useEffect, useRef, useState } from 'preact/hooks';
import { vouch } from '../api-client.ts';
import { may } from '../permissions.ts';
import { Loader, fmtMoney, fmtNumber, useLoad } from '../ui.tsx';
import { capacityWords, declineWords, economicsOf, fmtProbability, type Economics } from '../money.ts';
import { EditEconomics } from './policy-economics-form.tsx';

/** The economics as sentences a desk manager reads without the formulas. */
export function EconomicsWords({ e }: { e: Economics }) {
  const rates = Object.entries(e.rates ?? {});
  return (
    <ul class="economics-words">
      <li>
        Costs are counted in <strong>{e.currency}</strong>.
      </li>
      <li>An approved fraud loses {fmtProbability(e.lossRate ?? 1)} of its amount.</li>
      <li>Turning an honest trade away costs {declineWords(e.declineCost, e.currency)}.</li>
      <li>
        A review costs {fmtMoney(e.reviewCost, e.currency)}; reviewers are right{' '}
        {fmtProbability(e.reviewerAccuracy ?? 0.95)} of the time.
      </li>
      <li>
        Capacity: {e.reviewsPerDay === undefined ? 'not stated (no limit on reviews)' : capacityWords(e.reviewsPerDay)}.
      </li>
      {(e.reviewGainMin ?? 0) > 0 && (
        <li>A trade goes to review only where a review saves at least {fmtMoney(e.reviewGainMin, e.currency)}.</li>
      )}
      <li>
        {rates.length > 0
          ? `Other currencies: ${rates.map(([c, r]) => `1 ${c} = ${fmtNumber(r)} ${e.currency}`).join(', ')}; any other by the policy's reference amounts.`
          : "Amounts in other currencies convert by the policy's reference amounts."}
      </li>
    </ul>
  );
}

/** A version's economics (GET /api/v1/policies/{version}), with the form to change them for a writer. */
export function EconomicsPanel({
  version,
  note,
  onClose,
  onDerived,
}: {
  version: string;
  /** what led here (a candidate just derived), said at the top */
  note?: string;
  onClose: () => void;
  onDerived: (version: string) => void;
}) {
  const state = useLoad(() => vouch.GET('/api/v1/policies/{version}', { params: { path: { version } } }), [version]);
  const [editing, setEditing] = useState(false);
  const heading = useRef<HTMLHeadingElement>(null);
  // the panel opens below the versions: focus brings it into view and tells a screen reader it opened
  useEffect(() => {
    setEditing(false);
    heading.current?.focus();
  }, [version]);
  const write = may('policy:write', 'operator');
  return (
    <section class="panel economics" aria-labelledby="h-economics">
      <div class="title-row">
        <h2 id="h-economics" ref={heading} tabIndex={-1}>
          Economics of <span class="mono">{version}</span>
        </h2>
        <button type="button" onClick={onClose}>
          Close economics
        </button>
      </div>
      {note && (
        <p class="ok-msg" role="status">
          {note}
        </p>
      )}
      <Loader state={state} feature="The policy's economics">
        {(p) => {
          const e = economicsOf(p);
          return (
            <>
              {e ? (
                <>
                  <p>Each trade gets the outcome of least expected cost for its amount:</p>
                  <EconomicsWords e={e} />
                </>
              ) : (
                <p class="note">
                  This policy has no economics: its outcome is the level → outcome map's (low and medium approve, high
                  review, critical decline unless the policy says otherwise). With economics, each trade gets the
                  outcome of least expected cost for its amount.
                </p>
              )}
              {write &&
                (editing ? (
                  <EditEconomics from={p.version} economics={e} onCancel={() => setEditing(false)} onDone={onDerived} />
                ) : (
                  <button type="button" class="primary" onClick={() => setEditing(true)}>
                    {e ? 'Edit economics' : 'Add economics'}
                  </button>
                ))}
            </>
          );
        }}
      </Loader>
    </section>
  );
}
