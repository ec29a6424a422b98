import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

/** Debian's chromium: the project's own setup installs it (no Playwright browser download). */
export const CHROMIUM_PATH = '/usr/bin/chromium';

const ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface Browser {
  context: BrowserContext;
  close(): Promise<void>;
}

/** Never skips: a missing browser is a broken setup, and the message says how to fix it. */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(
      `Chromium is not installed at ${CHROMIUM_PATH}; the browser tests need it. ` +
        'Install it with `apt-get update && apt-get install -y chromium` (as root, or with sudo) and run the tests again.',
    );
  }
  // A fresh profile per run: nothing cached or remembered from an earlier run can make a test pass.
  const profile = mkdtempSync(join(tmpdir(), 'azflex-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: ARGS,
    viewport: { width: 1600, height: 1000 },
  });
  return {
    context,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** What a page did that it should not: script errors, console errors, requests elsewhere. */
export interface PageProblems {
  errors: string[];
  foreignRequests: string[];
}

/** Watches a page for errors and for any request outside `allowedPrefix` (a CDN, a font...). */
export function watchPage(page: Page, allowedPrefix: string): PageProblems {
  const problems: PageProblems = { errors: [], foreignRequests: [] };
  page.on('pageerror', (err) => problems.errors.push(`pageerror: ${err.message}`));
  page.on('console', (msg) => {
    if (msg.type() === 'error') problems.errors.push(`console: ${msg.text()}`);
  });
  page.on('request', (req) => {
    if (!req.url().startsWith(allowedPrefix) && !req.url().startsWith('data:')) problems.foreignRequests.push(req.url());
  });
  return problems;
}
