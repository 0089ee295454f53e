// Where a fit's labels came from (docs/api.md, "Policies": the report's `label_sources` and
// `sampling`), and the Policies page's line on the review labels given since the last fit.
import { useEffect, useState } from 'preact/hooks';
import { hasScope } from '../api.ts';
import { vouch } from '../api-client.ts';
import { fmtDate, fmtNumber } from '../ui.tsx';
import type { PolicyList } from '../types.ts';
import { reviewsApi } from './reviews-api.ts';

export type LabelSources = Record<string, number>;
export interface Sampling {
  decisions: number;
  weight: number;
  left_out: number;
}

/** The four sources docs/api.md ("Policies") names, in its order, with what each is. */
const SOURCES: [string, string, string][] = [
  ['api', 'From the API', 'labelled through POST /decisions/{id}/label'],
  ['event', 'From events', 'a chargeback, a lost dispute or a fraud report'],
  ['review', 'From reviews', "a reviewer's verdict"],
  ['assumed', 'Assumed legit', 'no other label, and its trade completed'],
];

/** The report's labels by source, as the HTML report says them under its title. */
export function LabelSourcesView({ sources, sampling }: { sources: LabelSources; sampling?: Sampling | undefined }) {
  const known = new Set(SOURCES.map(([k]) => k));
  const rows = [
    ...SOURCES.filter(([k]) => k in sources),
    ...Object.keys(sources)
      .filter((k) => !known.has(k))
      .map((k): [string, string, string] => [k, k, '']),
  ];
  return (
    <section aria-labelledby="h-label-sources">
      <h3 id="h-label-sources">Labels by source</h3>
      <dl class="facts label-sources">
        {rows.map(([key, name, what]) => (
          <div key={key}>
            <dt>{name}</dt>
            <dd class="big" data-source={key}>
              {fmtNumber(sources[key])}
            </dd>
            {what && <dd class="muted small">{what}</dd>}
          </div>
        ))}
      </dl>
      {sampling && sampling.decisions > 0 && (
        <p class="muted small">
          Sampled approvals: {fmtNumber(sampling.decisions)} reviewed, weighted to stand for{' '}
          {fmtNumber(Math.round(sampling.weight))} approvals ({fmtNumber(sampling.left_out)} unsampled approvals left
          out for them).
        </p>
      )}
    </section>
  );
}

type Listed = PolicyList['data'][number];

/**
 * Review labels given since the latest fitted policy was made (GET /api/v1/reviews/stats,
 * `review_labels_since_last_fit`): the labels a fit would have now that the last one did not. Right
 * after a fit that is 0, while every review label before it is in that fit and stays in the next,
 * so the line names the fit and how many review labels it had. `policies` is the Policies page's
 * list, newest first; the count is read again when its latest fit changes. Nothing for a principal
 * that may not read reviews.
 */
export function ReviewLabelsNote({ policies }: { policies: PolicyList | undefined }) {
  const fit: Listed | undefined = policies?.data.find((p) => p.source === 'fit');
  const [state, setState] = useState<{ n: number; fitReview?: number }>();
  useEffect(() => {
    if (!hasScope('reviews:read') || !policies) return;
    let live = true;
    const report = fit
      ? vouch.GET('/api/v1/policies/{version}', { params: { path: { version: fit.version } } }).then(
          (p) => (p.report as { label_sources?: LabelSources } | null)?.label_sources?.review,
          () => undefined,
        )
      : Promise.resolve(undefined);
    Promise.all([reviewsApi.stats(), report]).then(
      ([s, fitReview]) => live && setState({ n: s.review_labels_since_last_fit, fitReview }),
      () => {},
    );
    return () => void (live = false);
  }, [policies === undefined, fit?.version]);
  if (!state || !policies) return null;
  const { n, fitReview } = state;
  const count =
    n === 0 ? (
      <strong>No review label</strong>
    ) : (
      <strong>
        {fmtNumber(n)} {n === 1 ? 'review label' : 'review labels'}
      </strong>
    );
  let text;
  if (fit)
    text = (
      <>
        {count} since the last fit, <span class="mono">{fit.version}</span> on {fmtDate(fit.created_at)}
        {n > 0 ? `: the next fit learns from ${n === 1 ? 'it' : 'them'}, the last one did not.` : '.'}
        {fitReview !== undefined &&
          ` That fit learned from ${fmtNumber(fitReview)} review ${fitReview === 1 ? 'label' : 'labels'}.`}
      </>
    );
  // no fit on the first page, but more pages: whether one was ever made is not known here
  else if (policies.next_cursor !== null)
    text = <>{count} after the latest fit (or in all, if no policy was ever fitted).</>;
  else if (n > 0)
    text = (
      <>
        {count} so far, and no policy was fitted yet: a first fit learns from {n === 1 ? 'it' : 'them'}.
      </>
    );
  else text = <>{count} yet: resolve reviews on the Reviews page and their verdicts become labels.</>;
  return (
    <p class="note review-labels" role="note" data-review-labels={n}>
      {text}
    </p>
  );
}
