// Currency validation (CONTRACT §5): upper-case ISO 4217 from the maintained `currency-codes`
// list, or a crypto asset named by the policy. Codes are case-sensitive on purpose: `usd` is a
// client bug we report rather than silently normalise.
import cc from 'currency-codes';

// ISO 4217 codes that name no money a trade can be settled in: XTS is reserved for testing,
// XXX means "no currency", XBA–XBD are bond-market accounting units.
const NOT_TRADABLE = new Set(['XTS', 'XXX', 'XBA', 'XBB', 'XBC', 'XBD']);

const ISO_4217: ReadonlySet<string> = new Set(cc.codes().filter((c) => !NOT_TRADABLE.has(c)));

export function isValidCurrency(code: string, cryptoAssets: readonly string[]): boolean {
  return ISO_4217.has(code) || cryptoAssets.includes(code);
}
