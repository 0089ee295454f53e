// Shared pieces: the router, locale formatting, and the loading / error / empty states every page uses.
// The form pieces (fields, filters, confirmations) are in ui-forms.tsx and exported from here too.
import type { ComponentChildren, JSX } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import cc from 'currency-codes';
import { ApiProblem, HeldForApproval } from './api.ts';
import type { Change } from './people-types.ts';
export { AnyOf, CheckboxGroup, Confirm, DraftFilterForm, Field, SecretOnce, type DraftFilters } from './ui-forms.tsx';

const BASE = '/console';

// ---- routing: history API under /console (the service answers index.html for any /console/* path)
const routeListeners = new Set<() => void>();
export function navigate(path: string): void {
  history.pushState(null, '', BASE + path);
  for (const l of routeListeners) l();
  window.scrollTo(0, 0);
}
window.addEventListener('popstate', () => routeListeners.forEach((l) => l()));

/** The path after /console, e.g. "/decisions/dec_1"; "/" at the root. */
export function useRoute(): string {
  const read = () => location.pathname.slice(BASE.length) || '/';
  const [path, setPath] = useState(read);
  useEffect(() => {
    const l = () => setPath(read());
    routeListeners.add(l);
    return () => void routeListeners.delete(l);
  }, []);
  return path;
}

export function Link({
  to,
  children,
  ...rest
}: { to: string; children: ComponentChildren } & Omit<JSX.HTMLAttributes<HTMLAnchorElement>, 'href'>) {
  return (
    <a
      {...rest}
      href={BASE + to}
      onClick={(e) => {
        if (e.ctrlKey || e.metaKey || e.shiftKey || e.button !== 0) return;
        e.preventDefault();
        navigate(to);
      }}
    >
      {children}
    </a>
  );
}

// ---- formatting for the user's locale
const numberFmt = new Intl.NumberFormat(undefined, { maximumFractionDigits: 2 });
const dateFmt = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
export const fmtNumber = (n: number | null | undefined): string =>
  typeof n === 'number' && Number.isFinite(n) ? numberFmt.format(n) : '—';
export const fmtPercent = (n: number | null | undefined): string =>
  typeof n === 'number'
    ? new Intl.NumberFormat(undefined, { style: 'percent', maximumFractionDigits: 1 }).format(n)
    : '—';
export const fmtDate = (s: string | number | null | undefined): string => {
  if (s === null || s === undefined || s === '') return '—';
  const d = new Date(s);
  return Number.isNaN(d.getTime()) ? String(s) : dateFmt.format(d);
};
/**
 * Digits after the point for `currency`: ISO 4217's minor unit, from the list the service checks
 * currencies against and rounds safe amounts with (currency-codes: JPY 0, USD 2, BHD 3); undefined
 * for a crypto asset, which the service quotes to 8 decimals.
 */
function minorDigits(currency: string): number | undefined {
  const digits = cc.code(currency)?.digits;
  return typeof digits === 'number' && Number.isInteger(digits) && digits >= 0 && digits <= 8 ? digits : undefined;
}
const moneyFmts = new Map<string, Intl.NumberFormat>();
/**
 * Money, one way on every page: the amount in the currency's minor units, then its code ("600.00 USD",
 * "1,200 JPY", "0.015 BTC"); the code rather than a symbol, since "$" alone names a dozen currencies.
 * A crypto asset shows at least 2 decimals and up to its 8.
 */
export function fmtMoney(amount: number | null | undefined, currency?: string | null): string {
  if (typeof amount !== 'number' || !Number.isFinite(amount)) return '—';
  if (!currency) return fmtNumber(amount);
  let fmt = moneyFmts.get(currency);
  if (!fmt) {
    const digits = minorDigits(currency);
    fmt = new Intl.NumberFormat(undefined, {
      minimumFractionDigits: digits ?? 2,
      maximumFractionDigits: digits ?? 8,
    });
    if (moneyFmts.size < 256) moneyFmts.set(currency, fmt);
  }
  return `${fmt.format(amount)} ${currency}`;
}
/** datetime-local input value → RFC 3339 UTC, or undefined when empty. */
export const localToIso = (v: string): string | undefined => (v ? new Date(v).toISOString() : undefined);

// ---- data loading
export interface Loaded<T> {
  data: T | undefined;
  error: ApiProblem | undefined;
  loading: boolean;
  reload: () => void;
}

/** Runs `load` whenever `deps` change; a newer run wins over a slower older one. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data?: T; error?: ApiProblem; loading: boolean }>({ loading: true });
  const [tick, setTick] = useState(0);
  const run = useRef(0);
  useEffect(() => {
    const id = ++run.current;
    setState((s) => ({ ...s, loading: true, error: undefined }));
    load().then(
      (data) => id === run.current && setState({ data, loading: false }),
      (err: unknown) => id === run.current && setState({ error: toProblem(err), loading: false }),
    );
  }, [...deps, tick]);
  return { data: state.data, error: state.error, loading: state.loading, reload: () => setTick((t) => t + 1) };
}

export function toProblem(err: unknown): ApiProblem {
  return err instanceof ApiProblem ? err : new ApiProblem(0, 'error', err instanceof Error ? err.message : String(err));
}

/**
 * The one action of a form or a dialog: `busy` while it runs, its problem in `error` when it
 * fails. A successful action usually closes what started it, so `busy` stays on after success
 * unless `settle` is set (a form that stays on screen and can act again).
 */
export function useAction(options: { settle?: boolean } = {}): {
  busy: boolean;
  error: ApiProblem | undefined;
  run: (action: () => Promise<void>) => Promise<void>;
} {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiProblem>();
  const run = async (action: () => Promise<void>): Promise<void> => {
    setBusy(true);
    setError(undefined);
    try {
      await action();
      if (options.settle) setBusy(false);
    } catch (err) {
      setError(toProblem(err));
      setBusy(false);
    }
  };
  return { busy, error, run };
}

// ---- states
export const Loading = ({ what = 'Loading' }: { what?: string }) => (
  <p class="muted" role="status" aria-live="polite">
    {what}…
  </p>
);

/** What a change held by four eyes is, in words: "activating rule rul_…". */
export function changeWhat(c: Pick<Change, 'kind' | 'target'>): string {
  const name = c.target.slice(c.target.indexOf(':') + 1);
  if (c.kind === 'rule_activation') return `the change to rule ${name}`;
  if (c.kind === 'policy_activation') return `activating policy ${name}`;
  return `deleting list ${name}`;
}

/** What an action came to: done (a message), or held by four eyes (the pending change). */
export function Done({ outcome }: { outcome: string | Change | undefined }) {
  if (outcome === undefined) return null;
  if (typeof outcome !== 'string') return <HeldNotice change={outcome} />;
  return (
    <p class="ok-msg" role="status">
      {outcome}
    </p>
  );
}

/** A request four eyes holds (a 202): not applied yet, and where it waits. */
function HeldNotice({ change }: { change: Change }) {
  return (
    <div class="held" role="status" data-testid="held-for-approval">
      <strong>Waiting for a second person's approval.</strong> Nothing has changed yet: {changeWhat(change)} is pending
      until another person approves it (by {fmtDate(change.expires_at)}) under{' '}
      <Link to={`/changes/${encodeURIComponent(change.id)}`}>Pending changes</Link>.
    </div>
  );
}

export function ErrorBox({ error, what }: { error: ApiProblem | undefined; what?: string }) {
  if (!error) return null;
  if (error instanceof HeldForApproval) return <HeldNotice change={error.change} />;
  return (
    <div class="error" role="alert">
      <strong>{what ?? 'Something went wrong'}</strong>
      {error.status ? ` (${error.status})` : ''}: {error.detail}
      {error.errors.length > 0 && (
        <ul>
          {error.errors.map((e) => (
            <li key={e.field}>
              <code>{e.field}</code> {e.message}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

export const Empty = ({ children }: { children: ComponentChildren }) => (
  <div class="empty" role="status">
    {children}
  </div>
);

/** Loading → error → content. */
export function Loader<T>({
  state,
  feature,
  children,
}: {
  state: Loaded<T>;
  feature: string;
  children: (data: T) => ComponentChildren;
}) {
  if (state.error) return <ErrorBox error={state.error} what={`Could not load ${feature.toLowerCase()}`} />;
  if (state.data === undefined) return <Loading />;
  return <>{children(state.data)}</>;
}

export const LevelBadge = ({ level }: { level: string | undefined }) =>
  level ? <span class={`badge level-${level}`}>{level}</span> : <span>—</span>;
