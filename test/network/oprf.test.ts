// The network's cryptography: RFC 9497 test vectors (ristretto255-SHA512, VOPRF mode, appendix
// A.1.2) against the library as this project calls it, and properties of the OPRF round trip and
// of the sealed label.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { ristretto255_oprf } from '@noble/curves/ed25519.js';
import {
  blindInputs,
  deriveLabelKey,
  deriveTag,
  evaluateBlinded,
  evaluateOwn,
  finalizeAll,
  generateOprfKey,
  openLabel,
  prfInput,
  sealLabel,
  type Label,
} from '../../src/network/oprf.ts';
import { FLAG_KINDS } from '../../src/model/network-signal.ts';

const hex = (s: string) => Uint8Array.from(Buffer.from(s, 'hex'));
const toHex = (b: Uint8Array) => Buffer.from(b).toString('hex');

// RFC 9497, A.1.2 (ristretto255-SHA512, VOPRF mode).
const SEED = 'a3'.repeat(32);
const KEY_INFO = '74657374206b6579';
const SK = 'e6f73f344b79b379f1a0dd37e07ff62e38d9f71345ce62ae3a9bc60b04ccd909';
const PK = 'c803e2cc6b05fc15064549b5920659ca4a77b2cca6f04f6b357009335476ad4e';
const VECTORS = [
  {
    input: '00',
    blind: '64d37aed22a27f5191de1c1d69fadb899d8862b58eb4220029e036ec4c1f6706',
    blinded: '863f330cc1a1259ed5a5998a23acfd37fb4351a793a5b3c090b642ddc439b945',
    evaluated: 'aa8fa048764d5623868679402ff6108d2521884fa138cd7f9c7669a9a014267e',
    proof:
      'ddef93772692e535d1a53903db24367355cc2cc78de93b3be5a8ffcc6985dd066d4346421d17bf5117a2a1ff0fcb2a759f58a539dfbe857a40bce4cf49ec600d',
    proofRandom: '222a5e897cf59db8145db8d16e597e8facb80ae7d4e26d9881aa6f61d645fc0e',
    output:
      'b58cfbe118e0cb94d79b5fd6a6dafb98764dff49c14e1770b566e42402da1a7da4d8527693914139caee5bd03903af43a491351d23b430948dd50cde10d32b3c',
  },
  {
    input: '5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a',
    blind: '64d37aed22a27f5191de1c1d69fadb899d8862b58eb4220029e036ec4c1f6706',
    blinded: 'cc0b2a350101881d8a4cba4c80241d74fb7dcbfde4a61fde2f91443c2bf9ef0c',
    evaluated: '60a59a57208d48aca71e9e850d22674b611f752bed48b36f7a91b372bd7ad468',
    proof:
      '401a0da6264f8cf45bb2f5264bc31e109155600babb3cd4e5af7d181a2c9dc0a67154fabf031fd936051dec80b0b6ae29c9503493dde7393b722eafdf5a50b02',
    proofRandom: '222a5e897cf59db8145db8d16e597e8facb80ae7d4e26d9881aa6f61d645fc0e',
    output:
      '8a9a2f3c7f085b65933594309041fc1898d42d0858e59f90814ae90571a6df60356f4610bf816f27afdd84f47719e480906d27ecd994985890e5f539e7ea74b6',
  },
];
// Test vector 3: both inputs in one batch, one proof.
const BATCH = {
  blinds: [
    '64d37aed22a27f5191de1c1d69fadb899d8862b58eb4220029e036ec4c1f6706',
    '222a5e897cf59db8145db8d16e597e8facb80ae7d4e26d9881aa6f61d645fc0e',
  ],
  blinded: [
    '863f330cc1a1259ed5a5998a23acfd37fb4351a793a5b3c090b642ddc439b945',
    '90a0145ea9da29254c3a56be4fe185465ebb3bf2a1801f7124bbbadac751e654',
  ],
  evaluated: [
    'aa8fa048764d5623868679402ff6108d2521884fa138cd7f9c7669a9a014267e',
    'cc5ac221950a49ceaa73c8db41b82c20372a4c8d63e5dded2db920b7eee36a2a',
  ],
  proof:
    'cc203910175d786927eeb44ea847328047892ddf8590e723c37205cb74600b0a5ab5337c8eb4ceae0494c2cf89529dcf94572ed267473d567aeed6ab873dee08',
  proofRandom: '419c4f4f5052c53c45f3da494d2b67b220d02118e0857cdbcf037f9ea84bbe0c',
};

/**
 * The library draws a scalar as (48 random bytes, little-endian, mod (order − 1)) + 1; this
 * returns the bytes that make it draw the given RFC scalar (little-endian hex), so proofs and
 * blinds can be compared byte for byte with the RFC's.
 */
function drawing(scalarHex: string) {
  let x = 0n;
  for (const byte of [...hex(scalarHex)].reverse()) x = (x << 8n) | BigInt(byte);
  x -= 1n;
  return (n = 48) => {
    const out = new Uint8Array(n);
    let v = x;
    for (let i = 0; i < n; i++, v >>= 8n) out[i] = Number(v & 0xffn);
    return out;
  };
}

const voprf = ristretto255_oprf.voprf;
const keys = { secretKey: hex(SK), publicKey: hex(PK) };

describe('RFC 9497 test vectors, ristretto255-SHA512, VOPRF mode', () => {
  test('DeriveKeyPair(Seed, KeyInfo) gives skSm and pkSm', () => {
    const derived = voprf.deriveKeyPair(hex(SEED), hex(KEY_INFO));
    assert.equal(toHex(derived.secretKey), SK);
    assert.equal(toHex(derived.publicKey), PK);
  });

  for (const [i, v] of VECTORS.entries()) {
    test(`vector ${i + 1}: blind, evaluate with proof, finalize, and Evaluate`, () => {
      const blinded = voprf.blind(hex(v.input), drawing(v.blind));
      assert.equal(toHex(blinded.blind), v.blind);
      assert.equal(toHex(blinded.blinded), v.blinded);
      const answer = voprf.blindEvaluateBatch(
        keys.secretKey,
        keys.publicKey,
        [blinded.blinded],
        drawing(v.proofRandom),
      );
      assert.equal(toHex(answer.evaluated[0]!), v.evaluated);
      assert.equal(toHex(answer.proof), v.proof);
      // finalizeAll is what the asking side runs: it verifies the RFC's own proof.
      const outputs = finalizeAll(
        [{ input: hex(v.input), blind: hex(v.blind), blinded: hex(v.blinded) }],
        [hex(v.evaluated)],
        keys.publicKey,
        hex(v.proof),
      );
      assert.equal(outputs && toHex(outputs[0]!), v.output);
      // evaluateOwn is what the publishing side runs, without blinding: the same output.
      assert.equal(toHex(evaluateOwn(keys.secretKey, hex(v.input))), v.output);
    });
  }

  test('vector 3: a batch of two under one proof', () => {
    const answer = voprf.blindEvaluateBatch(
      keys.secretKey,
      keys.publicKey,
      BATCH.blinded.map(hex),
      drawing(BATCH.proofRandom),
    );
    assert.deepEqual(answer.evaluated.map(toHex), BATCH.evaluated);
    assert.equal(toHex(answer.proof), BATCH.proof);
    const items = VECTORS.map((v, i) => ({
      input: hex(v.input),
      blind: hex(BATCH.blinds[i]!),
      blinded: hex(BATCH.blinded[i]!),
    }));
    const outputs = finalizeAll(items, BATCH.evaluated.map(hex), keys.publicKey, hex(BATCH.proof));
    assert.deepEqual(
      outputs?.map(toHex),
      VECTORS.map((v) => v.output),
    );
  });

  test('a proof does not verify under another public key, nor for swapped answers', () => {
    const v = VECTORS[0]!;
    const item = [{ input: hex(v.input), blind: hex(v.blind), blinded: hex(v.blinded) }];
    assert.equal(finalizeAll(item, [hex(v.evaluated)], generateOprfKey().publicKey, hex(v.proof)), undefined);
    assert.equal(finalizeAll(item, [hex(VECTORS[1]!.evaluated)], keys.publicKey, hex(v.proof)), undefined);
  });
});

const identifier = fc.record({
  type: fc.constantFrom('phone', 'email', 'bank_account', 'device', 'other'),
  hash: fc.stringMatching(/^[0-9a-f]{16,64}$/),
});

describe('properties', () => {
  const server = generateOprfKey();

  test("the blinded round trip gives the server's own PRF value, whatever the batch", () => {
    fc.assert(
      fc.property(fc.array(identifier, { minLength: 1, maxLength: 5 }), (ids) => {
        const inputs = ids.map((id) => prfInput(id.type, id.hash));
        const blinded = blindInputs(inputs);
        const answer = evaluateBlinded(
          server,
          blinded.map((b) => b.blinded),
        );
        const outputs = finalizeAll(blinded, answer.evaluated, server.publicKey, answer.proof);
        assert.ok(outputs);
        outputs.forEach((out, i) => assert.equal(toHex(out), toHex(evaluateOwn(server.secretKey, inputs[i]!))));
      }),
      { numRuns: 25 },
    );
  });

  test('blinding hides the input: the same identifier blinds to a different element each time', () => {
    fc.assert(
      fc.property(identifier, (id) => {
        const [a, b] = blindInputs([prfInput(id.type, id.hash), prfInput(id.type, id.hash)]);
        assert.notEqual(toHex(a!.blinded), toHex(b!.blinded));
      }),
      { numRuns: 25 },
    );
  });

  test('a different type or key gives a different tag', () => {
    fc.assert(
      fc.property(identifier, (id) => {
        const other = generateOprfKey();
        const tag = deriveTag(evaluateOwn(server.secretKey, prfInput(id.type, id.hash)));
        assert.notEqual(deriveTag(evaluateOwn(other.secretKey, prfInput(id.type, id.hash))), tag);
        assert.notEqual(
          deriveTag(evaluateOwn(server.secretKey, prfInput(id.type === 'phone' ? 'email' : 'phone', id.hash))),
          tag,
        );
      }),
      { numRuns: 15 },
    );
  });

  const label = fc
    .record({
      kinds: fc.dictionary(fc.constantFrom(...FLAG_KINDS), fc.integer({ min: 1, max: 1000 }), { minKeys: 1 }),
      latest_month: fc
        .tuple(fc.integer({ min: 2009, max: 2099 }), fc.integer({ min: 1, max: 12 }))
        .map(([y, m]) => `${y}-${String(m).padStart(2, '0')}`),
    })
    .map((l) => ({ kinds: { ...l.kinds }, latest_month: l.latest_month })) as fc.Arbitrary<Label>;

  test('a sealed label opens with the key of the same PRF output and tag, and with nothing else', () => {
    fc.assert(
      fc.property(identifier, identifier, label, (id, otherId, value) => {
        const out = evaluateOwn(server.secretKey, prfInput(id.type, id.hash));
        const tag = deriveTag(out);
        const sealed = sealLabel(value, deriveLabelKey(out), tag);
        assert.deepEqual(openLabel(sealed, deriveLabelKey(out), tag), value);
        const otherOut = evaluateOwn(server.secretKey, prfInput(otherId.type, otherId.hash));
        if (toHex(otherOut) !== toHex(out)) assert.equal(openLabel(sealed, deriveLabelKey(otherOut), tag), undefined);
        assert.equal(
          openLabel(sealed, deriveLabelKey(out), deriveTag(otherOut) === tag ? `${tag}x` : deriveTag(otherOut)),
          undefined,
        );
        const flipped = Buffer.from(sealed, 'base64url');
        flipped[20] = flipped[20]! ^ 1;
        assert.equal(openLabel(flipped.toString('base64url'), deriveLabelKey(out), tag), undefined);
      }),
      { numRuns: 30 },
    );
  });

  test('the sealed label carries no plaintext: kinds and month do not appear in it', () => {
    const out = evaluateOwn(server.secretKey, prfInput('phone', 'ab'.repeat(32)));
    const sealed = sealLabel(
      { kinds: { fraud_report: 2 }, latest_month: '2026-11' },
      deriveLabelKey(out),
      deriveTag(out),
    );
    const bytes = Buffer.from(sealed, 'base64url').toString('latin1');
    assert.ok(!bytes.includes('fraud') && !bytes.includes('2026'));
  });
});
