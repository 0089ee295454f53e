// New-account tiers in the policy (docs/signals.md, "New accounts"): per-currency reference amounts
// and tiers by account age and completed trades. The model's use of them is src/model/tiers.ts.
import { Type, type Static } from 'typebox';

const strict = { additionalProperties: false } as const;
const Finite = (opts: { minimum?: number; maximum?: number; exclusiveMinimum?: number } = {}) => Type.Number(opts);
const Positive = () => Finite({ exclusiveMinimum: 0 });

/** A currency code as policies write it: ISO 4217 or a crypto asset of the list. */
export const CurrencyCode = '^[A-Z][A-Z0-9]{1,9}$';

export const NewAccountsSchema = Type.Object(
  {
    /**
     * per currency (ISO 4217 or a crypto asset of the list), the amount a tier's limitMultiple multiplies; an unlisted
     * currency has no tier limit
     */
    referenceAmounts: Type.Record(Type.String({ pattern: CurrencyCode }), Positive(), {
      maxProperties: 400,
      additionalProperties: false,
    }),
    /** the entity's tier is the last one whose minimums it meets; the first must ask for nothing */
    tiers: Type.Array(
      Type.Object(
        {
          minAgeDays: Finite({ minimum: 0, maximum: 36_500 }),
          minCompletedTrades: Type.Integer({ minimum: 0, maximum: 1_000_000 }),
          limitMultiple: Finite({ minimum: 0, maximum: 1_000_000 }),
        },
        strict,
      ),
      { minItems: 1, maxItems: 20 },
    ),
  },
  strict,
);

export type NewAccounts = Static<typeof NewAccountsSchema>;

/**
 * The default tiers (docs/signals.md, "New accounts"). Reference amounts are about USD 1,000 in each
 * currency's own units (the simulated market's rates for its fiat; crypto at late-2026 prices, to be
 * reviewed as prices move); the tiers follow Bisq's account-age limits: a quarter of the reference
 * for a new account, half after 30 days and 3 completed trades, the whole after 60 days and 10.
 */
export const DEFAULT_NEW_ACCOUNTS: NewAccounts = {
  referenceAmounts: {
    USD: 1000,
    EUR: 920,
    GBP: 800,
    CHF: 900,
    CAD: 1400,
    AUD: 1500,
    JPY: 150_000,
    CNY: 7200,
    HKD: 7800,
    SGD: 1350,
    INR: 83_000,
    PKR: 280_000,
    BDT: 120_000,
    PHP: 56_000,
    IDR: 16_000_000,
    VND: 25_000_000,
    THB: 36_000,
    MYR: 4700,
    NGN: 1_500_000,
    KES: 130_000,
    GHS: 15_000,
    ZAR: 18_000,
    EGP: 50_000,
    MAD: 10_000,
    TRY: 35_000,
    AED: 3670,
    BRL: 5000,
    MXN: 18_000,
    COP: 4_000_000,
    ARS: 1_000_000,
    PEN: 3700,
    CLP: 950_000,
    UAH: 41_000,
    PLN: 4000,
    USDT: 1000,
    USDC: 1000,
    DAI: 1000,
    BTC: 0.01,
    ETH: 0.3,
    BNB: 1.5,
    SOL: 5,
    TRX: 4000,
    XRP: 500,
    LTC: 10,
  },
  tiers: [
    { minAgeDays: 0, minCompletedTrades: 0, limitMultiple: 0.25 },
    { minAgeDays: 30, minCompletedTrades: 3, limitMultiple: 0.5 },
    { minAgeDays: 60, minCompletedTrades: 10, limitMultiple: 1 },
  ],
};

/** The policy's tiers; a stored policy that predates them gets the defaults. */
export function newAccountsOf(policy: { newAccounts?: NewAccounts }): NewAccounts {
  return policy.newAccounts ?? DEFAULT_NEW_ACCOUNTS;
}

/**
 * Tiers must grow together (each asks at least as much age and as many trades as the one before and
 * allows at least as much), so an older account or one more trade never lowers the limit; the
 * first asks for nothing, so every entity has a tier.
 */
export function tierProblems(n: NewAccounts): string[] {
  const problems: string[] = [];
  const first = n.tiers[0];
  if (first && (first.minAgeDays !== 0 || first.minCompletedTrades !== 0))
    problems.push('/newAccounts/tiers/0: the first tier must have minAgeDays 0 and minCompletedTrades 0');
  n.tiers.forEach((t, i) => {
    const prev = n.tiers[i - 1];
    if (!prev) return;
    for (const k of ['minAgeDays', 'minCompletedTrades', 'limitMultiple'] as const) {
      if (t[k] < prev[k]) problems.push(`/newAccounts/tiers/${i}/${k}: must be >= the previous tier's (${prev[k]})`);
    }
  });
  return problems;
}
