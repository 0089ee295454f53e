// The pinned lookup answers the checked address whatever name is asked, in both of Node's forms:
// one address, or every address (`all`, asked when autoSelectFamily is on).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pinnedLookup } from '../../src/lib/pinned-lookup.ts';

test('one address or all of them: always the checked one, never a second answer', () => {
  const lookup = pinnedLookup('203.0.113.7', 4);
  lookup('rebinding.example', {}, (err, address, family) => {
    assert.equal(err, null);
    assert.deepEqual([address, family], ['203.0.113.7', 4]);
  });
  lookup('rebinding.example', { all: true }, ((err: unknown, addresses: unknown) => {
    assert.equal(err, null);
    assert.deepEqual(addresses, [{ address: '203.0.113.7', family: 4 }]);
  }) as never);
});

test('a request to a name that resolves nowhere reaches the pinned address', async () => {
  const server = createServer((_req, res) => res.end('pinned'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  try {
    const body = await new Promise<string>((resolve, reject) => {
      const req = request(
        { host: 'nowhere.invalid', port, path: '/', lookup: pinnedLookup('127.0.0.1', 4), agent: false },
        (res) => {
          let text = '';
          res.on('data', (chunk) => (text += chunk));
          res.on('end', () => resolve(text));
        },
      );
      req.on('error', reject);
      req.end();
    });
    assert.equal(body, 'pinned');
  } finally {
    server.close();
  }
});
