import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inventoryTasks, startTestStack, waitFor, type TestStack } from '../support/harness.js';

const CHROMIUM = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';
const SCREENSHOT = join('test-output', 'dashboard.png');
/** Set DASHBOARD_SCREENSHOT=docs/dashboard.png to refresh the README's picture from this run. */
const EXTRA_SCREENSHOT = process.env['DASHBOARD_SCREENSHOT'];

/**
 * The local dashboard in a real browser (Debian's chromium driven by playwright-core, offline): during a
 * small workload its charts get data and its top-stores and per-store measures tables list the busy
 * store. CI installs chromium; elsewhere the test is skipped when no chromium is installed.
 */
describe.skipIf(!existsSync(CHROMIUM) && !process.env['CI'])('local dashboard in a browser', () => {
  let t: TestStack;
  let context: BrowserContext;
  let page: Page;
  let profile: string;

  beforeAll(async () => {
    t = await startTestStack({ workerPoolSize: 4 });
    const token = await t.tokenFor('acme');
    // The busy store drains at 10 tasks/s for ~40 s; the small ones finish at once.
    await t.createStore('busy-shop', {
      tenantId: 'acme',
      marketplace: 'amazon',
      plan: 'basic',
      overrides: { ratePerSecond: 10 },
    });
    for (const storeId of ['small-a', 'small-b', 'small-c'])
      await t.createStore(storeId, { tenantId: 'acme', marketplace: 'amazon', plan: 'pro' });
    await t.submitMany('busy-shop', token, inventoryTasks('busy', 400));
    for (const [i, storeId] of ['small-a', 'small-b', 'small-c'].entries())
      await t.submitMany(storeId, token, inventoryTasks(storeId, 20 * (i + 1)));

    profile = mkdtempSync(join(tmpdir(), 'aq-chromium-'));
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      viewport: { width: 1400, height: 1100 },
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    page = context.pages()[0] ?? (await context.newPage());
    await page.goto(`${t.stack.url}/dashboard`);
  });
  afterAll(async () => {
    await context?.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
    await t?.stop();
  });

  const chartTotal = async (id: string): Promise<number> =>
    Number(await page.getAttribute(`#chart-${id}`, 'data-total'));

  it('polls /metrics', async () => {
    // A string, evaluated in the page (the test's TypeScript has no DOM types).
    await page.waitForFunction('Number(document.body.dataset.polls || 0) >= 2', undefined, {
      timeout: 15_000,
    });
  });

  it('charts the ingest that happened', async () => {
    await waitFor('the ingest chart has data', async () => (await chartTotal('ingest')) > 0, 15_000);
  });

  it('charts deliveries as they happen', async () => {
    await waitFor('the deliveries chart has data', async () => (await chartTotal('deliveries')) > 0, 15_000);
  });

  it('charts slices and marketplace latency', async () => {
    await waitFor(
      'the slice and latency charts have data',
      async () => (await chartTotal('slices')) > 0 && (await chartTotal('latency')) > 0,
      15_000,
    );
  });

  it('lists the busy store first in the top-stores-by-backlog table', async () => {
    await page.waitForSelector('#top-backlog tbody tr[data-store="busy-shop"]', { timeout: 20_000 });
    expect(await page.getAttribute('#top-backlog tbody tr:first-child', 'data-store')).toBe('busy-shop');
  });

  it('lists the busy store in the per-store measures table, with its republished attentions', async () => {
    // Its slices end with backlog left, so its attention goes back on the queue (AttentionsPublished{requeue}).
    await page.waitForSelector('#per-store tbody tr[data-store="busy-shop"]', { timeout: 20_000 });
    await waitFor(
      'the busy store has republished attentions',
      async () =>
        Number(await page.textContent('#per-store tbody tr[data-store="busy-shop"] td:nth-child(2)')) > 0,
      15_000,
    );
    const column = (await page.locator('#per-store tbody tr td:nth-child(2)').allTextContents()).map(Number);
    expect(column.length).toBeLessThanOrEqual(20);
    expect(column).toEqual([...column].sort((x, y) => y - x));
  });

  it('shows the busy store’s backlog in the header', async () => {
    const backlog = Number((await page.textContent('#s-backlog'))?.replace(/,/g, ''));
    expect(backlog).toBeGreaterThan(0);
  });

  it('saves a screenshot', async () => {
    await page.waitForTimeout(4_000); // a few more seconds of lines on the charts
    mkdirSync(dirname(SCREENSHOT), { recursive: true });
    await page.screenshot({ path: SCREENSHOT, fullPage: true });
    if (EXTRA_SCREENSHOT) await page.screenshot({ path: EXTRA_SCREENSHOT, fullPage: true });
    expect(existsSync(SCREENSHOT)).toBe(true);
  });
});
