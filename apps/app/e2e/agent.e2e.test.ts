/**
 * The Agent page in Chromium against a real server and a real running hearth-agent with an MLLP
 * channel: disconnected before the agent starts and connected after, the channel with its address
 * and bot, an HL7 message sent through the channel listed with its ACK, the configuration reloaded,
 * a message pushed to an npm MLLP server with its answer shown; at 375 and 1280 px no sideways
 * scrolling and no serious or critical axe-core violation.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error mllp-node ships no types
import mllp from 'mllp-node';
import { Hl7Message } from '@hearth/core';
import { HearthAgent } from '../../agent/src/agent.js';
import { hl7, mllpClient, quietLog } from '../../agent/src/testing.js';
import { createTestAgent, type TestAgent } from '../../server/src/agent/testing.js';
import { createTestApp, getFreePort, type TestApp } from '../../server/src/test/app.js';
import { describeViolations, overflowsHorizontally, seriousViolations } from './axe.js';
import { CHROMIUM, CHROMIUM_ARGS, chromiumForSuite, ensureAppBuilt, screenshotDir } from './harness.js';

const BOT = `
import { buildAck } from '@hearth/core';
export async function handler(client: any, event: any) {
  const message = event.input;
  return buildAck(message, { code: 'AA', text: 'stored by bot' });
}
`;

describe.runIf(chromiumForSuite())('the Agent page in Chromium', () => {
  let server: TestApp;
  let browser: Browser;
  let page: Page;
  let testAgent: TestAgent;
  let agent: HearthAgent | undefined;
  let dataDir: string;
  let adtPort: number;
  const url = (path: string) => new URL(path, server.baseUrl).toString();
  const shot = (name: string) => page.screenshot({ path: `${screenshotDir}/${name}.png`, fullPage: true });
  const agentPage = () => url(`/Agent/${testAgent.agentId}/agent`);

  /** What is wrong with the page as drawn: sideways scrolling, serious or critical axe violations. */
  async function problemsOf(name: string): Promise<string[]> {
    await page.waitForLoadState('networkidle');
    const overflow = await overflowsHorizontally(page);
    const violations = await seriousViolations(page);
    await shot(name);
    return [
      ...(overflow ? [`${name} scrolls sideways: ${JSON.stringify(overflow)}`] : []),
      ...(violations.length ? [`${name}:\n${describeViolations(violations)}`] : []),
    ];
  }

  beforeAll(async () => {
    await ensureAppBuilt();
    server = await createTestApp({ listen: true });
    adtPort = await getFreePort();
    testAgent = await createTestAgent(server, BOT, [
      { name: 'adt', address: `mllp://127.0.0.1:${adtPort}?ackMode=durable` },
    ]);
    dataDir = mkdtempSync(join(tmpdir(), 'hearth-agent-e2e-'));
    const { chromium } = await import('playwright-core');
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.setDefaultTimeout(30_000);
    page.on('pageerror', (err) => console.error(`page error: ${err.message}`));
  }, 300_000);

  afterEach(async (ctx) => {
    if (ctx.task.result?.state === 'fail' && page) {
      await shot(`failed-agent-${ctx.task.name.replace(/[^a-z0-9]+/gi, '-').slice(0, 50)}`).catch(() => undefined);
    }
  });

  afterAll(async () => {
    await agent?.stop();
    await browser?.close();
    await server?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('shows the agent disconnected, with its channel, address and bot, before the agent runs', async () => {
    await page.goto(url('/signin'));
    await page.getByLabel('Email').fill(server.testProject.email);
    await page.getByLabel('Password').fill(server.testProject.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: /^Welcome/ }).waitFor();

    await page.goto(agentPage());
    await page.getByRole('tab', { name: 'Agent', selected: true }).waitFor();
    await page.getByText('Disconnected', { exact: true }).waitFor();
    const channels = page.getByRole('table', { name: 'Agent channels' });
    const adt = channels.getByRole('row').filter({ hasText: 'adt' });
    await adt.getByText(`mllp://127.0.0.1:${adtPort}?ackMode=durable`).waitFor();
    expect(await adt.getByRole('link', { name: 'agent bot' }).getAttribute('href')).toBe(`/Bot/${testAgent.botId}`);
    await page.getByRole('heading', { name: 'Messages on adt' }).waitFor();
    await shot('agent-disconnected');
  }, 180_000);

  it('shows the agent connected once it runs, and an HL7 message through its channel with the ACK', async () => {
    agent = new HearthAgent(
      {
        baseUrl: server.baseUrl,
        agentId: testAgent.agentId,
        clientId: testAgent.clientId,
        clientSecret: testAgent.clientSecret,
        dataDir,
        heartbeatMs: 1000,
      },
      quietLog,
    );
    await agent.start();
    // The page polls the status.
    await page.getByText('Connected', { exact: true }).waitFor();
    await page.getByText('0.1.0', { exact: true }).waitFor();

    const client = await mllpClient(adtPort);
    const ack = Hl7Message.parse(await client.send(hl7('E2E1')));
    client.close();
    expect(ack.get('MSA-1')).toBe('AA');
    const table = page.getByRole('table', { name: 'Messages on adt' });
    const row = table.getByRole('row').filter({ hasText: 'E2E1' });
    await row.waitFor();
    await row.getByText('200 ok').waitFor();
    await row.getByRole('button', { name: 'Show' }).click();
    const details = table.getByRole('row').filter({ hasText: 'Message (x-application/hl7-v2+er7)' });
    await details.getByText(/MSA\|AA\|E2E1\|stored by bot/).waitFor();
    await shot('agent-message');
  }, 180_000);

  it('reloads the configuration', async () => {
    await page.getByRole('button', { name: 'Reload configuration' }).click();
    await page.getByRole('status').filter({ hasText: 'The agent reloaded its configuration.' }).waitFor();
  }, 120_000);

  it('pushes a message to an MLLP server through the agent and shows its answer', async () => {
    const port = await getFreePort();
    const remote = new mllp.MLLPServer('127.0.0.1', port, () => undefined);
    const received = new Promise<string>((resolve) => remote.on('hl7', resolve));
    const form = page.getByRole('form', { name: 'Push a message through the agent' });
    await form.getByRole('textbox', { name: /^Destination/ }).fill(`mllp://127.0.0.1:${port}`);
    await form.getByRole('textbox', { name: /^Body/ }).fill(hl7('PUSH1').replace(/\r/g, '\n').trim());
    await form.getByRole('button', { name: 'Push' }).click();
    const answer = page.getByLabel('Remote answer', { exact: true });
    await answer.waitFor();
    expect(await received).toContain('|PUSH1|');
    expect(await answer.textContent()).toContain('MSA|AA|PUSH1');
    // The push is in the channel's messages, outgoing, with the same answer.
    const out = page.getByRole('table', { name: 'Messages on adt' }).getByRole('row').filter({ hasText: 'PUSH1' });
    await out.getByText('out', { exact: true }).waitFor();
    await shot('agent-push');
  }, 120_000);

  it('is usable at 375 and 1280 px, with no serious accessibility violation', async () => {
    const problems: string[] = [];
    for (const width of [375, 1280]) {
      await page.setViewportSize({ width, height: 900 });
      await page.goto(agentPage());
      await page.getByText('Connected', { exact: true }).waitFor();
      const row = page.getByRole('table', { name: 'Messages on adt' }).getByRole('row').filter({ hasText: 'E2E1' });
      await row.getByRole('button', { name: 'Show' }).click();
      problems.push(...(await problemsOf(`agent-page-${width}`)));
    }
    expect(problems).toEqual([]);
  }, 300_000);
});
