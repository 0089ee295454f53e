// The trade a review is about, as its decision stored the score request (docs/api.md, "Decisions":
// `request`, what was asked, without entity ids: the amount, the currency and the trade context the
// service keeps, e.g. payment_method, side, country, counterparty_country, trade_id). Amount and
// currency have their own boxes on the page; every other member is shown as stored, as text.
import { hasScope } from '../api.ts';
import { Link } from '../ui.tsx';
import { words } from './decision-facts.tsx';

const NAMES: Record<string, string> = {
  payment_method: 'Payment method',
  side: 'Side',
  country: 'Country',
  counterparty_country: 'Counterparty country',
  counterparty_id: 'Counterparty',
  trade_id: 'Trade',
};
const ORDER = Object.keys(NAMES);
const COUNTRIES = new Set(['country', 'counterparty_country']);
/** a member's name as a label: "sales_channel" → "Sales channel" */
const title = (k: string) => k.charAt(0).toUpperCase() + (words(k.slice(1)) ?? '');

let regions: Intl.DisplayNames | undefined;
/** "Germany (DE)" for an ISO 3166-1 code the browser can name; the code alone otherwise. */
function country(code: string): string {
  try {
    regions ??= new Intl.DisplayNames(undefined, { type: 'region' });
    const name = /^[A-Z]{2}$/.test(code) ? regions.of(code) : undefined;
    return name && name !== code ? `${name} (${code})` : code;
  } catch {
    return code;
  }
}

function Value({ name, value }: { name: string; value: unknown }) {
  if (typeof value !== 'string') return <span class="mono">{JSON.stringify(value)}</span>;
  if (COUNTRIES.has(name)) return <>{country(value)}</>;
  if (name === 'payment_method') return <>{words(value)}</>;
  if (name === 'counterparty_id')
    return hasScope('trust:read') ? (
      <Link to={`/entities/${encodeURIComponent(value)}`} class="mono" title={value}>
        {value}
      </Link>
    ) : (
      <span class="mono">{value}</span>
    );
  return <span class={name === 'side' ? undefined : 'mono'}>{value}</span>;
}

/** The request's context members as boxes of a `dl.facts`; `shownTradeId` is left out (the page shows it). */
export function TradeContext({
  request,
  shownTradeId,
}: {
  request: Record<string, unknown> | null | undefined;
  shownTradeId: string | null | undefined;
}) {
  if (!request)
    return (
      <div data-context="none">
        <dt>Trade context</dt>
        <dd class="muted">not recorded for this decision</dd>
      </div>
    );
  const rank = (k: string) => (ORDER.includes(k) ? ORDER.indexOf(k) : ORDER.length);
  const members = Object.entries(request)
    .filter(([k, v]) => k !== 'amount' && k !== 'currency' && v !== null && v !== undefined)
    .filter(([k, v]) => !(k === 'trade_id' && v === shownTradeId))
    .sort(([a], [b]) => rank(a) - rank(b));
  if (members.length === 0)
    return (
      <div data-context="none">
        <dt>Trade context</dt>
        <dd class="muted">none given</dd>
      </div>
    );
  return (
    <>
      {members.map(([k, v]) => (
        <div key={k} data-context={k} class={k === 'counterparty_id' ? 'wide' : undefined}>
          <dt>{NAMES[k] ?? title(k)}</dt>
          <dd class={k === 'counterparty_id' ? 'trunc' : undefined}>
            <Value name={k} value={v} />
          </dd>
        </div>
      ))}
    </>
  );
}
