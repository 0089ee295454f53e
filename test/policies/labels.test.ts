import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { completionIndex, trainingLabel } from '../../src/policies/labels.ts';

const DAY = 86_400_000;
const NOW = Date.parse('2026-11-21T00:00:00Z');
const completed = completionIndex([
  { type: 'trade.completed', entity_id: 'e1', trade_id: 't1' },
  { type: 'trade.cancelled', entity_id: 'e1', trade_id: 't2' },
  { type: 'trade.completed', entity_id: 'e2', trade_id: 't3' },
]);
const rules = { now: NOW, completed };

describe('trainingLabel', () => {
  test('a stored label wins, whatever the age or trade', () => {
    assert.equal(trainingLabel({ createdAt: NOW, entityId: 'e1', tradeId: 't1', label: 'fraud' }, rules), 1);
    assert.equal(trainingLabel({ createdAt: NOW, entityId: 'x', label: 'legit' }, rules), 0);
  });

  test('unlabelled, older than 60 days and completed counts as legit', () => {
    assert.equal(trainingLabel({ createdAt: NOW - 61 * DAY, entityId: 'e1', tradeId: 't1' }, rules), 0);
  });

  test('unlabelled and too young, cancelled, another entity’s trade or no trade id is left out', () => {
    assert.equal(trainingLabel({ createdAt: NOW - 60 * DAY, entityId: 'e1', tradeId: 't1' }, rules), null);
    assert.equal(trainingLabel({ createdAt: NOW - 90 * DAY, entityId: 'e1', tradeId: 't2' }, rules), null);
    assert.equal(trainingLabel({ createdAt: NOW - 90 * DAY, entityId: 'e1', tradeId: 't3' }, rules), null);
    assert.equal(trainingLabel({ createdAt: NOW - 90 * DAY, entityId: 'e1', tradeId: null }, rules), null);
  });

  test('assume_legit_after_days is honoured', () => {
    assert.equal(
      trainingLabel({ createdAt: NOW - 8 * DAY, entityId: 'e1', tradeId: 't1' }, { ...rules, assumeLegitAfterDays: 7 }),
      0,
    );
    assert.equal(
      trainingLabel({ createdAt: NOW - 6 * DAY, entityId: 'e1', tradeId: 't1' }, { ...rules, assumeLegitAfterDays: 7 }),
      null,
    );
  });
});
