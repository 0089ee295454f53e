// Issue 18, item 2: raw identifiers in disguise (fillers and other invisible code points between
// digits, labels joined by any punctuation, percent-encoding, leading or trailing punctuation and
// words, punycode TLDs) are refused; legitimate ids and ordinary prose are not. The corpus
// (test/helpers/identifier-corpus.json) is the record of every disguise seen; the properties
// compose random ones.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { looksLikeRawIdentifier, rawIdentifierInText } from '../../src/lib/identifiers.ts';
import {
  composedDisguise,
  composedDisguiseForText,
  corpus,
  INVISIBLE,
  legitimateId,
  refusedAs,
} from '../helpers/disguises.ts';

const show = (v: string) => JSON.stringify(v);

test('corpus: every disguised raw identifier is refused, as the kind it is', () => {
  assert.ok(corpus.refused.length >= 80);
  const missed = corpus.refused.filter((e) => !refusedAs(e.kind, looksLikeRawIdentifier(e.value)));
  assert.deepEqual(
    missed.map((e) => `${show(e.value)} (${e.why}): ${looksLikeRawIdentifier(e.value)}`),
    [],
  );
});

test('corpus: every legitimate id passes', () => {
  const refused = corpus.accepted.filter((e) => looksLikeRawIdentifier(e.value) !== null);
  assert.deepEqual(
    refused.map((e) => `${show(e.value)} (${e.why}): ${looksLikeRawIdentifier(e.value)}`),
    [],
  );
});

test('corpus: free text refuses what ids refuse, and identifiers inside sentences', () => {
  const missed = [...corpus.refused, ...corpus.text_refused].filter(
    (e) => !refusedAs(e.kind, rawIdentifierInText(e.value)),
  );
  assert.deepEqual(
    missed.map((e) => `${show(e.value)}: ${rawIdentifierInText(e.value)}`),
    [],
  );
});

test('corpus: ordinary prose with short numbers, dates, times, amounts and ids passes as free text', () => {
  const refused = [...corpus.text_accepted, ...corpus.accepted].filter((e) => rawIdentifierInText(e.value) !== null);
  assert.deepEqual(
    refused.map((e) => `${show(e.value)}: ${rawIdentifierInText(e.value)}`),
    [],
  );
});

test('the disguises of the issue, one by one', () => {
  for (const filler of INVISIBLE) {
    assert.equal(looksLikeRawIdentifier(`+1${filler}415${filler}555${filler}2671`), 'phone', show(filler));
    assert.equal(looksLikeRawIdentifier(`alice${filler}@example.com`), 'email', show(filler));
  }
  for (const joiner of ['=', '/', '_', ':', '.', '-', '#', '|', '~', '+', '']) {
    assert.equal(looksLikeRawIdentifier(`phone${joiner}+14155552671`), 'phone', joiner);
    assert.equal(looksLikeRawIdentifier(`card${joiner}4111111111111111`), 'card', joiner);
  }
  for (const edge of ['#', '*', '~', '-', '/']) {
    assert.equal(looksLikeRawIdentifier(`${edge}+14155552671`), 'phone', edge);
    assert.equal(looksLikeRawIdentifier(`+14155552671${edge}`), 'phone', edge);
  }
  assert.equal(looksLikeRawIdentifier('%2B14155552671'), 'phone');
  assert.equal(looksLikeRawIdentifier('john%40example.com'), 'email');
  assert.equal(looksLikeRawIdentifier('+14155552671 (mobile)'), 'phone');
  assert.equal(looksLikeRawIdentifier('4111 1111 1111 1111 exp'), 'card');
  assert.equal(looksLikeRawIdentifier('alice@example.com#'), 'email');
  assert.equal(looksLikeRawIdentifier('alice@example.xn--p1ai'), 'email');
});

test('a digit run joined to an unknown word by weak punctuation stays part of an id', () => {
  for (const joiner of ['-', '_', '/', '#', '.', '+', '']) {
    assert.equal(looksLikeRawIdentifier(`user${joiner}1234567`), null, joiner);
    assert.equal(looksLikeRawIdentifier(`1234567${joiner}user`), null, joiner);
  }
  // ...while a strong joiner (whitespace, brackets, ':' or '=') makes it a value of its own.
  for (const joiner of [' ', ':', '=', '(', ' = '])
    assert.equal(looksLikeRawIdentifier(`user${joiner}4155552671`), 'phone', show(joiner));
});

test('property: a valid phone, e-mail, IBAN or card under random stacked disguises is always refused', () => {
  fc.assert(
    fc.property(composedDisguise, ({ kind, text }) => {
      const found = looksLikeRawIdentifier(text);
      assert.ok(refusedAs(kind, found), `${kind} ${show(text)} -> ${found}`);
    }),
    { numRuns: 4000 },
  );
});

test('property: the same inside a sentence of free text is refused', () => {
  const sentence = fc.tuple(
    fc.constantFrom('', 'Buyer said ', 'call me at ', 'note: ', 'chargeback 3 of 5 on 2026-11-20, '),
    fc.constantFrom('', ' please', '. Thanks!', ', 2 of 3 lost'),
  );
  fc.assert(
    fc.property(composedDisguiseForText, sentence, ({ kind, text }, [before, after]) => {
      const note = `${before}${text}${after}`;
      assert.ok(refusedAs(kind, rawIdentifierInText(note)), `${kind} ${show(note)} -> ${rawIdentifierInText(note)}`);
    }),
    { numRuns: 3000 },
  );
});

test('property: legitimate ids (digests, ULIDs, UUIDs, prefixed short or glued numbers) always pass', () => {
  fc.assert(
    fc.property(legitimateId, (id) => {
      assert.equal(looksLikeRawIdentifier(id), null, show(id));
    }),
    { numRuns: 5000 },
  );
});

test('property: a disguise wrapped around a legitimate id does not make it a raw identifier', () => {
  const wrapper = fc.constantFrom(
    ['', ''],
    ['"', '"'],
    ['(', ')'],
    ['%20', ''],
    ['\u3164', '\u3164'],
    ['#', ''],
    ['', '.'],
    ['<', '>'],
  );
  fc.assert(
    fc.property(legitimateId, wrapper, (id, [open, close]) => {
      assert.equal(looksLikeRawIdentifier(`${open}${id}${close}`), null, show(`${open}${id}${close}`));
    }),
    { numRuns: 2000 },
  );
});

test('property: any string gets an answer of the four kinds or null, and the same answer twice', () => {
  const piece = fc.oneof(
    fc.constantFrom(
      '\ud83d\ude00',
      '𝟏',
      '\ud835',
      '\ude00',
      ' ',
      '-',
      '+',
      '#',
      '(',
      ')',
      '<',
      '>',
      '"',
      '«',
      '»',
      ':',
      '=',
      '%',
      '%2',
      '%2B',
      '%40',
      '&#',
      '&#43;',
      '@',
      '.',
      'xn--',
      'tel:',
      'phone=',
      'card_',
      'IBAN',
      'GB82',
      'WEST',
      '1234',
      '4111',
      '٣',
      '\u3164',
      '\u200b',
      'ä',
      'x',
      'exp',
      '.com',
    ),
    fc.string({ unit: 'binary', maxLength: 3 }),
    fc.string({ unit: 'grapheme', maxLength: 3 }),
    fc.stringMatching(/^[0-9a-f]{0,64}$/),
  );
  fc.assert(
    fc.property(
      fc.array(piece, { maxLength: 14 }).map((parts) => parts.join('')),
      (value) => {
        const kind = looksLikeRawIdentifier(value);
        assert.ok(kind === null || ['phone', 'email', 'iban', 'card'].includes(kind));
        assert.equal(looksLikeRawIdentifier(value), kind);
        const inText = rawIdentifierInText(value);
        assert.ok(inText === null || ['phone', 'email', 'iban', 'card'].includes(inText));
      },
    ),
    { numRuns: 5000 },
  );
});

test('property: prose with short numbers, dates, times, amounts and ids between its words passes as free text', () => {
  // Two-letter words that are IBAN country codes ("at", "de", "es", "it", "no") come before numbers.
  const word = fc.constantFrom(
    'the',
    'buyer',
    'paid',
    'at',
    'de',
    'es',
    'it',
    'no',
    'be',
    'is',
    'on',
    'of',
    'am',
    'pm',
    'chargeback',
    'refund',
    'lost',
    'won',
    'dispute',
    'USD',
    'EUR',
    'x',
    'exp',
    'phone',
    'card',
    'mobile',
    'call',
    'ref',
    'ticket',
    '(see',
    'notes)',
  );
  const number = fc.oneof(
    fc.integer({ min: 0, max: 999_999 }).map(String),
    fc
      .date({ min: new Date('2000-01-01'), max: new Date('2099-12-31'), noInvalidDate: true })
      .map((d) => d.toISOString()),
    fc
      .date({ min: new Date('2000-01-01'), max: new Date('2099-12-31'), noInvalidDate: true })
      .map((d) => d.toISOString().slice(0, 10)),
    fc
      .tuple(
        fc.integer({ min: 1, max: 31 }),
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 2000, max: 2099 }),
        fc.constantFrom('.', '/', '-'),
      )
      .map(([d, m, y, sep]) => `${d}${sep}${m}${sep}${y}`),
    fc
      .tuple(fc.integer({ min: 0, max: 23 }), fc.integer({ min: 0, max: 59 }), fc.boolean())
      .map(([h, m, s]) => `${h}:${String(m).padStart(2, '0')}${s ? ':07' : ''}`),
    fc
      .integer({ min: 1_000, max: 999_999_999 })
      .map((n) => `${n.toLocaleString('en-US')}.${String(n % 100).padStart(2, '0')}`),
    fc.integer({ min: 0, max: 99_999_999 }).map((n) => `${(n / 100).toFixed(2)}`),
    fc.integer({ min: 0, max: 100 }).map((n) => `${n}%`),
    legitimateId,
  );
  const sentence = fc
    .array(fc.tuple(word, fc.option(number), fc.constantFrom(' ', ', ', '; ', '. ', ': ')), {
      minLength: 1,
      maxLength: 12,
    })
    .map((parts) => parts.map(([w, n, p]) => (n === null ? `${w}${p}` : `${w} ${n}${p}`)).join(''));
  fc.assert(
    fc.property(sentence, (note) => {
      assert.equal(rawIdentifierInText(note), null, show(note));
    }),
    { numRuns: 3000 },
  );
});
