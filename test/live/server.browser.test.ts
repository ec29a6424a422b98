import { tmpdir } from 'node:os';
import { mkdirSync } from 'node:fs';
import { request } from 'node:http';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLiveServer } from '../../src/live/server.js';
import { startLiveSimulation, type LiveSimulation } from '../../src/live/sim-run.js';
import type { LiveSource } from '../../src/live/source.js';
import type { LogEntry } from '../../src/runtime/event-log.js';
import { builtInScenario } from '../../src/sim/scenarios.js';
import { SIM_EPOCH_MS } from '../../src/sim/simulation.js';
import { launchChromium, watchPage, type Browser } from './browser.js';

// The screenshot README.md and docs/viz.md show is refreshed only on request (AZFLEX_UPDATE_SCREENSHOT=1), so a test
// run does not leave the work tree dirty; otherwise it goes to the temp dir.
const SCREENSHOT = process.env.AZFLEX_UPDATE_SCREENSHOT
  ? resolve(dirname(fileURLToPath(import.meta.url)), '../../docs/live-view.png')
  : join(tmpdir(), 'azflex-live-view.png');

/** The page's virtual "now" (ms since the simulation started). */
async function pageNow(page: Page): Promise<number> {
  return Number(await page.locator('#time').getAttribute('data-now')) - SIM_EPOCH_MS;
}

/** Polled from here: the page's CSP (rightly) forbids the eval that `waitForFunction(string)` needs. */
async function waitForNow(page: Page, atLeastMs: number, timeoutMs = 15_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while ((await pageNow(page)) < atLeastMs) {
    if (performance.now() > deadline) throw new Error(`virtual time did not reach ${atLeastMs} ms (at ${await pageNow(page)} ms)`);
    await page.waitForTimeout(50);
  }
}

async function count(page: Page, machine: string, state: string): Promise<number> {
  return Number(await page.locator(`#counts tr[data-state="${machine}:${state}"]`).getAttribute('data-count'));
}

async function activeStates(page: Page, machine: string): Promise<string[]> {
  return page.locator(`svg.diagram[data-machine="${machine}"] g.node.active > title`).allTextContents();
}

describe('live view in chromium', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });

  describe('during a paced quota-blind simulation (quota learnt from refusals)', () => {
    let live: LiveSimulation;
    beforeAll(async () => {
      const scenario = builtInScenario('quota-blind');
      if (!scenario) throw new Error('quota-blind scenario missing');
      live = await startLiveSimulation({ simulation: { scenario, seed: 1, strategy: 'machine', hours: 0.5 }, stepMs: 1_000, paused: true });
    });
    afterAll(async () => {
      await live?.stop();
    });

    it('follows the simulation as it is stepped, shows the NIC reservation countdown, and runs to the end at speed', async () => {
      const page = await browser.context.newPage();
      const problems = watchPage(page, live.server.url);
      let navigations = 0;
      page.on('framenavigated', () => navigations++);
      await page.goto(live.server.url);

      // Paused at T+0: nothing has happened yet.
      await page.locator('#status', { hasText: 'paused' }).waitFor();
      expect(await page.locator('#time').textContent()).toBe('T+00:00:00');
      expect(await page.locator('#actors .actor').count()).toBe(0);

      // Step 10 s: the clock moves exactly that far and stops again.
      await page.getByRole('button', { name: 'Step +10 s' }).click();
      await page.locator(`#time[data-now="${SIM_EPOCH_MS + 10_000}"]`).waitFor();
      await page.locator('#status', { hasText: 'paused' }).waitFor();

      // One more minute: the provisioner made three NodeClaims; quota fits two, so one VM create
      // failed and its NIC waits out ARM's 180 s reservation.
      await page.getByRole('button', { name: 'Step +1 min' }).click();
      await page.locator(`#time[data-now="${SIM_EPOCH_MS + 70_000}"]`).waitFor();
      await page.locator('#actors .actor[data-state="reserved-180s"]').waitFor();
      expect(await page.locator('#actors .actor.live[data-actor^="nodeclaim/"]').count()).toBe(3);
      expect(await count(page, 'nic', 'reserved-180s')).toBe(1);
      expect(await count(page, 'nic', 'attached')).toBe(2);
      expect(await count(page, 'nodeclaim', 'terminating.awaiting-nic-release')).toBe(1);
      expect(await activeStates(page, 'nic')).toEqual(expect.arrayContaining(['nic.attached', 'nic.reserved-180s']));
      expect(await page.locator('svg.diagram[data-machine="nic"] g.node.active:has(title:text-is("nic.reserved-180s")) g.badge text').textContent()).toBe('1');

      // The reserved NIC's countdown, from ARM's own reservedUntil.
      const reservedNic = (await page.locator('#actors .actor[data-state="reserved-180s"]').getAttribute('data-actor')) ?? '';
      const nicName = reservedNic.replace(/^nic\//, '');
      const countdown = page.locator(`#reservations .countdown[data-nic="${nicName}"]`);
      const remaining = Number(await countdown.getAttribute('data-remaining-ms'));
      expect(remaining).toBeGreaterThan(100_000);
      expect(remaining).toBeLessThan(180_000);
      expect(await countdown.locator('.left').textContent()).toBe(`${Math.ceil(remaining / 1000)} s`);

      // Its timeline says what moved it there.
      await page.locator(`#actors .actor[data-actor="${reservedNic}"]`).click();
      await page.locator('#selected', { hasText: reservedNic }).waitFor();
      const toReserved = page.locator('#timeline .row.transition', { hasText: 'nic-created → reserved-180s' });
      await toReserved.waitFor();
      expect(await toReserved.locator('.why').textContent()).toContain('VM_FAILED');
      expect(await page.locator('#timeline .row.effect', { hasText: 'putNic' }).count()).toBe(1);
      expect(await page.locator('svg.diagram[data-machine="nic"] g.node.selected > title').allTextContents()).toEqual(['nic.reserved-180s']);

      mkdirSync(dirname(SCREENSHOT), { recursive: true });
      await page.screenshot({ path: SCREENSHOT, fullPage: true });

      // Ten more seconds: the countdown follows virtual time exactly.
      await page.getByRole('button', { name: 'Step +10 s' }).click();
      await page.locator(`#time[data-now="${SIM_EPOCH_MS + 80_000}"]`).waitFor();
      await page.locator(`#reservations .countdown[data-nic="${nicName}"][data-remaining-ms="${remaining - 10_000}"]`).waitFor();

      // Speed up and resume: the reservation ends, the NIC is deleted and its actor finishes.
      await page.locator('#speed').selectOption('600');
      await page.getByRole('button', { name: '▶ Resume' }).click();
      await page.locator('#status', { hasText: 'running' }).waitFor();
      await waitForNow(page, 4 * 60_000);
      await page.getByRole('button', { name: '⏸ Pause' }).click();
      await page.locator('#status', { hasText: 'paused' }).waitFor();
      expect(live.source.clock.status().speed).toBe(600);
      // The step under way when the click landed still completes; after that, time stands still.
      await page.waitForTimeout(300);
      const pausedAt = await pageNow(page);
      await page.waitForTimeout(400);
      expect(await pageNow(page)).toBe(pausedAt);

      await page.locator(`#actors .actor.gone[data-actor="${reservedNic}"]`).waitFor();
      expect(await count(page, 'nic', 'reserved-180s')).toBe(0);
      const reaped = page.locator('#timeline .row.transition', { hasText: 'deleting → reaped' });
      await reaped.waitFor();
      expect(await reaped.locator('.why').textContent()).toContain('deleteNic ok');
      expect(await page.locator('#timeline .row.transition', { hasText: 'reserved-180s → probing-before-delete' }).locator('.why').textContent()).toContain('after 180 s');
      // Stayed on the reserved NIC's countdown until it ran out, then dropped it.
      expect(await countdown.count()).toBe(0);

      // As fast as possible to the end: the settled world, and the controls are done.
      await page.locator('#speed').selectOption('max');
      await page.getByRole('button', { name: '▶ Resume' }).click();
      await page.locator('#status', { hasText: 'finished' }).waitFor();
      const run = await live.run;
      expect(run.result.leakedNics).toBe(0);
      await page.locator('#actors .actor.live').first().waitFor();
      expect(await count(page, 'nodeclaim', 'initialized')).toBe(run.result.nodeClaimsLaunched);
      expect(await page.getByRole('button', { name: 'Step +10 s' }).isDisabled()).toBe(true);

      expect(navigations).toBe(1);
      expect(problems).toEqual({ errors: [], foreignRequests: [] });
      // Nothing secret-shaped ever reached the page (customData is gzip+base64: H4sI...).
      expect(await page.content()).not.toMatch(/H4sI|customData|userData|kubeconfig|Bearer /i);
      await page.close();
    });
  });

  describe('for a source without a virtual clock (the real controller)', () => {
    const listeners = new Set<(e: LogEntry) => void>();
    const states = { nodeClaims: new Map([['gpu-a', 'launching.creating-vm']]), nics: new Map([['azflex-gpu-a-nic', 'nic-created']]) };
    const source: LiveSource = {
      title: 'controller',
      now: () => Date.UTC(2026, 0, 1, 12),
      actorStates: () => states,
      subscribe: (l) => {
        listeners.add(l);
        return () => listeners.delete(l);
      },
    };

    it('is read-only, and still pushes what the actors do', async () => {
      const server = await startLiveServer({ source, port: 0, pushIntervalMs: 300 });
      try {
        const page = await browser.context.newPage();
        const problems = watchPage(page, server.url);
        await page.goto(server.url);
        await page.locator('#status', { hasText: 'live' }).waitFor();
        expect(await page.locator('#controls').count()).toBe(0);
        expect(await page.locator('#time').textContent()).toBe('12:00:00');
        expect(await count(page, 'nodeclaim', 'launching.creating-vm')).toBe(1);

        // A transition arrives: state, counts, diagram and the selected actor's timeline follow.
        const t = source.now();
        states.nics.set('azflex-gpu-a-nic', 'attached');
        for (const l of listeners) l({ t, actor: 'nic/azflex-gpu-a-nic', kind: 'transition', from: 'nic-created', to: 'attached' });
        await page.locator('#actors .actor[data-actor="nic/azflex-gpu-a-nic"]').click();
        const row = page.locator('#timeline .row.transition', { hasText: 'nic-created → attached' });
        await row.first().waitFor();
        // The push that carries the same row lands after the fetched timeline (pushes are 300 ms apart): shown once.
        await expect.poll(() => count(page, 'nic', 'attached')).toBe(1);
        expect(await row.count()).toBe(1);
        expect(await activeStates(page, 'nic')).toEqual(['nic.attached']);
        expect(problems).toEqual({ errors: [], foreignRequests: [] });
        await page.close();

        const post = await fetch(`${server.url}api/clock`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"action":"pause"}' });
        expect(post.status).toBe(404);
        // A DNS-rebinding page reaches the server under a foreign host name: refused.
        expect(await statusWithHost(server.port, 'attacker.example:80')).toBe(403);
      } finally {
        await server.close();
      }
    });
  });
});

function statusWithHost(port: number, host: string): Promise<number | undefined> {
  return new Promise((resolvePromise, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/api/state', headers: { Host: host } }, (res) => {
      res.resume();
      resolvePromise(res.statusCode);
    });
    req.on('error', reject);
    req.end();
  });
}
