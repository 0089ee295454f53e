// hashIdentifier (docs/network.md, "Common hashing"): the SDK gives every vector of the docs' table,
// and the canonical forms behave as the table of rules says.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import fc from 'fast-check';
import { canonicalIdentifier, hashIdentifier, type IdentifierType } from '../../sdk/src/index.ts';

const DOC = readFileSync(new URL('../../docs/network.md', import.meta.url), 'utf8');

function vectors(): Array<{ type: IdentifierType; raw: string; canonical: string; hash: string }> {
  const section = DOC.slice(DOC.indexOf('| type | raw (JSON) | canonical | hashIdentifier |'));
  const rows = section
    .split('\n')
    .slice(2)
    .filter((line) => line.startsWith('| `'));
  return rows.map((line) => {
    const cells = [...line.matchAll(/`([^`]*)`/g)].map((m) => m[1]!);
    return {
      type: cells[0] as IdentifierType,
      raw: JSON.parse(cells[1]!) as string,
      canonical: cells[2]!,
      hash: cells[3]!,
    };
  });
}

test('every vector in docs/network.md: the canonical form and its SHA-256', () => {
  const all = vectors();
  assert.ok(all.length >= 10, `the docs' table has ${all.length} vectors`);
  for (const v of all) {
    assert.equal(canonicalIdentifier(v.type, v.raw), v.canonical, JSON.stringify(v.raw));
    assert.equal(hashIdentifier(v.type, v.raw), v.hash, JSON.stringify(v.raw));
    assert.equal(
      createHash('sha256').update(v.canonical).digest('hex'),
      v.hash,
      'the hash is plain SHA-256 of the canonical form',
    );
  }
  assert.ok(new Set(all.map((v) => v.type)).size === 5, 'every identifier type has a vector');
});

test('ways of writing one phone, e-mail or IBAN hash alike; a national phone number or a non-address is refused', () => {
  const same = (type: IdentifierType, ...raws: string[]) =>
    assert.equal(new Set(raws.map((r) => hashIdentifier(type, r))).size, 1, raws.join(' / '));
  same('phone', '+234 803 123 4567', '00234-803-123-4567', '+234.803.123.4567', '(+234) 8031234567', '+2348031234567');
  same('email', 'Bob@Example.org', ' bob@example.org\t', 'BOB@EXAMPLE.ORG');
  same('bank_account', 'NL91 ABNA 0417 1643 00', 'nl91abna0417164300');
  assert.notEqual(hashIdentifier('email', 'bob+p2p@example.org'), hashIdentifier('email', 'bob@example.org'));
  for (const bad of ['020 7946 0958', '+0 123 456 789', '+12', 'phone'])
    assert.throws(() => hashIdentifier('phone', bad), TypeError, bad);
  for (const bad of ['bob', '@example.org', 'bob@', 'bob smith@example.org'])
    assert.throws(() => hashIdentifier('email', bad), TypeError, bad);
  assert.throws(() => hashIdentifier('device', '   '), TypeError);
  assert.throws(() => hashIdentifier('passport' as IdentifierType, 'X'), TypeError);
});

test('properties: canonical forms are fixed points; hashes are 64 lower-case hex', () => {
  const phone = fc
    .tuple(fc.integer({ min: 1, max: 999 }), fc.stringMatching(/^[0-9]{6,11}$/))
    .map(([cc, n]) => `+${cc} ${n.slice(0, 3)} ${n.slice(3)}`);
  fc.assert(
    fc.property(phone, (raw) => {
      const canonical = canonicalIdentifier('phone', raw);
      assert.equal(canonicalIdentifier('phone', canonical), canonical);
      assert.match(hashIdentifier('phone', raw), /^[0-9a-f]{64}$/);
    }),
  );
  fc.assert(
    fc.property(fc.emailAddress(), (raw) => {
      const canonical = canonicalIdentifier('email', ` ${raw.toUpperCase()} `);
      assert.equal(canonicalIdentifier('email', canonical), canonical);
      assert.equal(canonical, raw.toLowerCase().normalize('NFKC'));
    }),
  );
});
