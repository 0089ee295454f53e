// One Chromium a test process (test/console/browser.ts sharedChromium): the files of a group share
// it, and one that went away (a crash, or a suite that closed it) is launched again for the next.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { describeInBrowser, sharedChromium } from './browser.ts';

describeInBrowser('one Chromium a test process', { server: false }, (suite) => {
  test('every suite of the process is handed the same browser', async () => {
    assert.equal(await sharedChromium(), suite().browser);
    assert.equal(await sharedChromium(), await sharedChromium());
  });

  test('a browser that went away is launched again, and serves pages', async () => {
    const gone = suite().browser;
    await gone.close();
    assert.equal(gone.isConnected(), false);
    const next = await sharedChromium();
    assert.notEqual(next, gone);
    assert.equal(next.isConnected(), true);
    const context = await next.newContext();
    try {
      const page = await context.newPage();
      await page.setContent('<p>served</p>');
      assert.equal(await page.textContent('p'), 'served');
    } finally {
      await context.close();
    }
  });
});
