// Currency and country validation (docs/api.md, "Trust scoring"). Currencies: upper-case ISO 4217 from the
// maintained `currency-codes` list, or a crypto asset named by the policy. Codes are
// case-sensitive on purpose: `usd` is a client bug we report rather than silently normalise.
// Countries: assigned ISO 3166-1 alpha-2 codes from the maintained `iso-3166-1` list.
import cc from 'currency-codes';
import iso3166 from 'iso-3166-1';

// ISO 4217 codes that name no money a trade can be settled in: XTS is reserved for testing,
// XXX means "no currency", XBA–XBD are bond-market accounting units.
const NOT_TRADABLE = new Set(['XTS', 'XXX', 'XBA', 'XBB', 'XBC', 'XBD']);

const ISO_4217: ReadonlySet<string> = new Set(cc.codes().filter((c) => !NOT_TRADABLE.has(c)));

export function isValidCurrency(code: string, cryptoAssets: readonly string[]): boolean {
  return ISO_4217.has(code) || cryptoAssets.includes(code);
}

// XK (Kosovo) is user-assigned rather than ISO, but banks (it has an IBAN format), card networks
// and payment providers use it, so refusing it would refuse real traders.
const COUNTRIES: ReadonlySet<string> = new Set([...iso3166.all().map((c) => c.alpha2), 'XK']);

export function isCountryCode(code: string): boolean {
  return COUNTRIES.has(code);
}
