import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isValidCurrency } from '../../src/model/currency.ts';

const CRYPTO = ['BTC', 'ETH', 'USDT', 'USDC', 'BNB', 'SOL', 'TRX', 'XRP', 'LTC', 'DAI'] as const;

test('upper-case ISO 4217 codes are valid', () => {
  for (const c of ['USD', 'EUR', 'GBP', 'JPY', 'NGN', 'KES', 'INR', 'BRL', 'XOF', 'XAF', 'CHF']) {
    assert.equal(isValidCurrency(c, CRYPTO), true, c);
  }
});

test('crypto assets from the policy list are valid, others are not', () => {
  for (const c of CRYPTO) assert.equal(isValidCurrency(c, CRYPTO), true, c);
  assert.equal(isValidCurrency('DOGE', CRYPTO), false);
  assert.equal(isValidCurrency('DOGE', [...CRYPTO, 'DOGE']), true);
  assert.equal(isValidCurrency('BTC', []), false);
});

test('lower/mixed case, unknown, empty and padded codes are invalid', () => {
  for (const c of ['usd', 'Usd', 'btc', 'ABC', 'US', 'USDD', '', ' USD', 'USD ']) {
    assert.equal(isValidCurrency(c, CRYPTO), false, JSON.stringify(c));
  }
});

test('ISO codes that are not money are invalid', () => {
  for (const c of ['XXX', 'XTS', 'XBA', 'XBB', 'XBC', 'XBD']) assert.equal(isValidCurrency(c, CRYPTO), false, c);
});
