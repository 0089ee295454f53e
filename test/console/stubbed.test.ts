// The pages whose endpoints other branches add (decision list and labels, policies, webhooks),
// driven in chromium against responses shaped exactly as CONTRACT §8–§10 describes, served by the
// browser's request interception; everything else (sign-in, the console itself) is the real server.
// The real-server suite (console.test.ts) runs the same flows end to end once the endpoints exist.
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import type { Browser, Page, Route } from 'playwright-core';
import { ADMIN_ID, ADMIN_SECRET, bearer } from '../helpers/app.ts';
import { hash } from '../helpers/trust.ts';
import { CHROMIUM, ensureConsoleBuilt, launch, shot, startServer, type Server } from './browser.ts';

const skip = existsSync(CHROMIUM) ? false : `${CHROMIUM} is missing: install Debian's chromium package to run the console's browser tests`;
const NOW = new Date().toISOString();
const M = { roc_auc: 0.81, average_precision: 0.62, brier: 0.12, calibration_error: 0.04 };

const json = (route: Route, status: number, body: unknown) => route.fulfill({ status, contentType: 'application/json', body: JSON.stringify(body) });

describe('console pages against contract-shaped responses', { skip }, () => {
  let server: Server;
  let browser: Browser;
  let page: Page;
  let decisionId: string;
  const cspErrors: string[] = [];

  before(async () => {
    ensureConsoleBuilt();
    server = await startServer();
    const admin = await server.token();
    const scored = await server.inject({ method: 'POST', url: '/api/v1/trust/score', headers: bearer(admin), payload: { entity_id: hash('stub-entity'), amount: 50, currency: 'EUR' } });
    decisionId = scored.json().decision_id;
    browser = await launch();
    page = await (await browser.newContext({ viewport: { width: 1280, height: 800 }, locale: 'de-DE' })).newPage();
    page.setDefaultTimeout(5_000);
    page.on('console', (m) => {
      if (m.type() === 'error' && /Content Security Policy|Refused to/i.test(m.text())) cspErrors.push(m.text());
    });
    await page.goto(`${server.base}/console`);
    await page.getByLabel('Client ID').fill(ADMIN_ID);
    await page.getByLabel('Client secret').fill(ADMIN_SECRET);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
  });

  after(async () => {
    await browser?.close();
    await server?.close();
  });

  const nav = (name: string) => page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name, exact: true });

  test('Decisions: the list, filtered by label, and a Fraud label sent as POST …/label', async () => {
    let label: string | undefined;
    const seen: string[] = [];
    await page.route((url) => url.pathname === '/api/v1/decisions', (route) => {
      const q = new URL(route.request().url()).searchParams;
      seen.push(q.toString());
      const row = { id: decisionId, kind: 'score', subject_id: hash('stub-entity'), policy_version: 'p1', created_at: NOW, result: { score: 72, risk_level: 'high' }, label: label ? { label } : null };
      const other = { id: 'ana_1', kind: 'dispute_analysis', subject_id: 'dsp_1', policy_version: 'p1', created_at: NOW, result: { recommendation: 'manual_review', risk_flags: [] }, label: null };
      const rows = q.get('label') === 'fraud' ? (label === 'fraud' ? [row] : []) : [row, other];
      return json(route, 200, { data: rows, next_cursor: null });
    });
    await page.route((url) => url.pathname.endsWith('/label'), async (route) => {
      label = (route.request().postDataJSON() as { label: string }).label;
      return json(route, 200, { decision_id: decisionId, label, source: 'api', labelled_at: NOW, labelled_by: ADMIN_ID });
    });
    await nav('Keys').click();
    await nav('Decisions').click();
    await page.locator('tbody tr').nth(1).waitFor();
    await shot(page, 'stub-01-decisions');
    await page.getByRole('link', { name: /\d/ }).first().click();
    await page.getByRole('button', { name: 'Fraud' }).click();
    await page.locator('dl.facts').getByText('fraud', { exact: true }).waitFor();
    assert.equal(label, 'fraud');
    await nav('Decisions').click();
    await page.getByLabel('Label').selectOption('fraud');
    await page.getByLabel('Risk level').selectOption('high');
    const filtered = page.waitForResponse((r) => r.url().includes('label=fraud'));
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await filtered;
    await page.waitForFunction('document.querySelectorAll("tbody tr").length === 1');
    await page.locator(`a[href="/console/decisions/${decisionId}"]`).waitFor();
    assert.ok(seen.some((q) => /label=fraud/.test(q) && /risk_level=high/.test(q)), seen.join(' | '));
    await page.unrouteAll();
  });

  test('Disputes: manual reviews come first, with both parties\' scores and the worst flag', async () => {
    const party = (score: number, risk_level: string) => ({ entity_id: hash(`p${score}`), score, risk_level, safe_amount: null });
    const analysis = (id: string, recommendation: string, flags: { severity: string }[]) => ({
      id, kind: 'dispute_analysis', subject_id: id, policy_version: 'p1', created_at: NOW, label: null,
      result: { dispute_id: `dsp_${id}`, analysis_id: id, recommendation, confidence: 0.9, risk_flags: flags.map((f, i) => ({ code: `f${i}`, party: 'trade', message: 'm', ...f })), parties: { buyer: party(12, 'low'), seller: party(64, 'high') }, missing_evidence: [], policy_version: 'p1' },
    });
    let query = '';
    await page.route((url) => url.pathname === '/api/v1/decisions', (route) => {
      query = new URL(route.request().url()).search;
      return json(route, 200, { data: [analysis('ana_newer', 'release_to_buyer', [{ severity: 'low' }]), analysis('ana_older', 'manual_review', [{ severity: 'medium' }, { severity: 'critical' }])], next_cursor: null });
    });
    await nav('Disputes').click();
    await page.locator('tbody tr').nth(1).waitFor();
    assert.match(query, /kind=dispute/);
    const first = await page.locator('tbody tr').first().innerText();
    assert.match(first, /dsp_ana_older[\s\S]*manual review[\s\S]*critical[\s\S]*12[\s\S]*64/);
    await shot(page, 'stub-03-disputes');
    await page.unrouteAll();
  });

  test('Policies: versions, backtest, the report, and activation after a confirmation showing level changes', async () => {
    const policies = [
      { version: 'p1', status: 'active', source: 'builtin', parent_version: null, created_at: NOW, created_by: null, summary: {} },
      { version: 'p2-fit', status: 'candidate', source: 'fit', parent_version: 'p1', created_at: NOW, created_by: ADMIN_ID, summary: {} },
    ];
    const backtest = { version: 'p2-fit', decisions: 1200, labelled: 340, metrics: M, levels: { low: { low: 700, medium: 40 }, medium: { low: 12, medium: 200, high: 8 }, high: { high: 150, critical: 5 }, critical: { critical: 85 } } };
    let activated = false;
    await page.route((url) => url.pathname.startsWith('/api/v1/policies'), (route) => {
      const { pathname } = new URL(route.request().url());
      const method = route.request().method();
      if (pathname === '/api/v1/policies' && method === 'GET') return json(route, 200, { data: policies, next_cursor: null });
      if (pathname.endsWith('/backtest')) return json(route, 200, backtest);
      if (pathname.endsWith('/report')) {
        assert.match(String(route.request().headers().accept), /text\/html/);
        return route.fulfill({ status: 200, contentType: 'text/html', body: '<!doctype html><title>report</title><svg></svg>' });
      }
      if (pathname.endsWith('/activate')) {
        activated = true;
        policies[0]!.status = 'retired';
        policies[1]!.status = 'active';
        return json(route, 200, policies[1]);
      }
      if (pathname === '/api/v1/policies/p2-fit') {
        return json(route, 200, { ...policies[1], document: { bias: -2.1 }, report: {
          labels: { fraud: 120, legit: 220 }, holdout: { decisions: 100, fraud: 35 }, metrics: { base: M, candidate: { ...M, roc_auc: 0.86 } },
          thresholds: [{ risk_level: 'high', min_score: 60, share_flagged: 0.12, precision: 0.7, recall: 0.55 }],
          weights: { chargebacks: { base: 2.5, candidate: 2.9 }, fraud_reports: { base: 3, candidate: 2.4 }, completed_trades: { base: -0.12, candidate: -0.2 } },
        } });
      }
      return json(route, 404, { code: 'not_found', detail: 'No such policy.' });
    });
    await nav('Policies').click();
    await page.getByRole('cell', { name: 'p2-fit', exact: true }).waitFor();
    await page.getByRole('button', { name: 'Report of p2-fit' }).click();
    await page.getByRole('heading', { name: /Report of/ }).waitFor();
    await page.getByText('Weights before and after').waitFor();
    assert.equal(await page.locator('section.panel canvas').count(), 1);
    await shot(page, 'stub-06-policies');
    const download = page.waitForEvent('download');
    await page.getByRole('button', { name: 'Download the HTML report with plots' }).click();
    assert.equal((await download).suggestedFilename(), 'vouch-policy-p2-fit-report.html');
    await page.getByRole('button', { name: 'Close report' }).click();
    await page.getByRole('button', { name: 'Activate p2-fit' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByText(/Level changes/).waitFor();
    assert.match(await dialog.locator('caption').first().innerText(), /65 decisions change level/);
    await shot(page, 'stub-07-policy-activate');
    await dialog.getByRole('button', { name: 'Activate' }).click();
    await page.getByText('Policy p2-fit is now active.').waitFor();
    assert.ok(activated);
    await page.unrouteAll();
  });

  test('Webhooks: create shows the signing secret once; deliveries list with retry; delete after confirmation', async () => {
    const hooks: Record<string, unknown>[] = [];
    let retried = '';
    await page.route((url) => url.pathname.startsWith('/api/v1/webhooks'), (route) => {
      const { pathname } = new URL(route.request().url());
      const method = route.request().method();
      if (pathname === '/api/v1/webhooks' && method === 'GET') return json(route, 200, { data: hooks, next_cursor: null });
      if (pathname === '/api/v1/webhooks' && method === 'POST') {
        const body = route.request().postDataJSON() as Record<string, unknown>;
        const hook = { id: 'wh_1', ...body, created_at: NOW };
        hooks.push(hook);
        return json(route, 201, { ...hook, secret: 'whsec_c2VjcmV0LXNob3duLW9uY2U=' });
      }
      if (pathname.endsWith('/deliveries')) return json(route, 200, { data: [{ id: 'msg_1', type: 'decision.high_risk', status: 'failed', attempts: 3, response_status: 500, last_attempt_at: NOW, next_attempt_at: NOW, created_at: NOW }], next_cursor: null });
      if (pathname.endsWith('/retry')) {
        retried = pathname;
        return json(route, 202, { id: 'msg_1', status: 'pending' });
      }
      if (method === 'DELETE') {
        hooks.length = 0;
        return json(route, 200, {});
      }
      return json(route, 404, { code: 'not_found', detail: 'No such webhook.' });
    });
    await nav('Webhooks').click();
    await page.getByText('No webhooks yet.').waitFor();
    await page.getByRole('button', { name: 'Create webhook' }).click();
    await page.getByLabel('Endpoint URL').fill('https://hooks.example.com/vouch');
    await page.getByLabel('entity.flagged').check();
    await page.getByRole('button', { name: 'Create', exact: true }).click();
    const box = page.getByRole('region', { name: /Signing secret/ });
    assert.equal(await box.locator('input').inputValue(), 'whsec_c2VjcmV0LXNob3duLW9uY2U=');
    await box.getByRole('button', { name: 'Done' }).click();
    await page.getByRole('cell', { name: 'https://hooks.example.com/vouch' }).waitFor();
    await page.getByRole('button', { name: 'Deliveries' }).click();
    await page.getByRole('button', { name: 'Retry' }).click();
    await page.getByText('Delivery queued for another attempt.').waitFor();
    assert.equal(retried, '/api/v1/webhooks/wh_1/deliveries/msg_1/retry');
    await shot(page, 'stub-11-webhooks');
    await page.getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
    await page.getByText('No webhooks yet.').waitFor();
    await page.unrouteAll();
  });

  test('an error answer shows the problem detail', async () => {
    await page.route((url) => url.pathname === '/api/v1/webhooks', (route) => json(route, 503, { code: 'unavailable', detail: 'The store is unreachable; retry shortly.' }));
    await nav('Keys').click();
    await nav('Webhooks').click();
    await page.getByRole('alert').getByText('The store is unreachable; retry shortly.').waitFor();
    await page.unrouteAll();
  });

  test('no stubbed page broke the Content-Security-Policy', () => {
    assert.deepEqual(cspErrors, []);
  });
});
