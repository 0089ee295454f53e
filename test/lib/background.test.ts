// lib/background.ts: the app's background services start in the order added and stop in reverse;
// a start that fails stops the start there, and stop then stops only what started; a failed stop
// is reported and does not keep the others running.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BackgroundServices, type BackgroundService } from '../../src/lib/background.ts';

function recorder(events: string[], failOn?: string): (name: string) => BackgroundService {
  return (name) => ({
    name,
    start: async () => {
      if (failOn === `start ${name}`) throw new Error(`cannot start ${name}`);
      events.push(`start ${name}`);
    },
    stop: () => {
      if (failOn === `stop ${name}`) throw new Error(`cannot stop ${name}`);
      events.push(`stop ${name}`);
    },
  });
}

test('services start in the order added and stop in reverse', async () => {
  const events: string[] = [];
  const service = recorder(events);
  const list = new BackgroundServices();
  for (const name of ['feed', 'rules', 'webhooks']) list.add(service(name));
  await list.start();
  await list.stop(() => assert.fail('no stop fails'));
  assert.deepEqual(events, ['start feed', 'start rules', 'start webhooks', 'stop webhooks', 'stop rules', 'stop feed']);
});

test('a failed start stops the start there; stop stops only what started', async () => {
  const events: string[] = [];
  const service = recorder(events, 'start rules');
  const list = new BackgroundServices();
  for (const name of ['feed', 'rules', 'webhooks']) list.add(service(name));
  await assert.rejects(list.start(), /cannot start rules/);
  await list.stop(() => {});
  assert.deepEqual(events, ['start feed', 'stop feed']);
});

test('a failed stop is reported and the others still stop; a second stop does nothing', async () => {
  const events: string[] = [];
  const failed: string[] = [];
  const service = recorder(events, 'stop rules');
  const list = new BackgroundServices();
  for (const name of ['feed', 'rules', 'webhooks']) list.add(service(name));
  await list.start();
  await list.stop((name, err) => failed.push(`${name}: ${(err as Error).message}`));
  await list.stop(() => assert.fail('stopped twice'));
  assert.deepEqual(failed, ['rules: cannot stop rules']);
  assert.deepEqual(events.slice(3), ['stop webhooks', 'stop feed']);
});
