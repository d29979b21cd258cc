// Test helpers for bots and subscriptions (used by *.test.ts only).
import type { Resource } from '@hearth/core';
import type { TestApp } from '../test/app.js';

export const FHIR_JSON = 'application/fhir+json';

/** The project requests of the test app act in: the test project whose admin t.authHeaders signs in. */
export function testProjectId(t: TestApp): string {
  return t.testProject.projectId;
}

/**
 * Creates a Bot and its ProjectMembership through POST /admin/projects/{id}/bot (optionally with an
 * access policy), then sets any other fields given.
 */
export async function createBot(
  t: TestApp,
  bot: Partial<Resource> = {},
  accessPolicy?: string,
): Promise<Resource & { id: string }> {
  const projectId = testProjectId(t);
  const res = await post(t, `admin/projects/${projectId}/bot`, {
    name: (bot.name as string | undefined) ?? 'test bot',
    ...(accessPolicy ? { accessPolicy: { reference: accessPolicy } } : {}),
  });
  if (res.status !== 201) {
    throw new Error(`bot creation failed: ${res.status} ${res.text}`);
  }
  const created = res.json() as Resource & { id: string };
  if (Object.keys(bot).length === 0) {
    return created;
  }
  const { resource } = await t.services.systemRepo(projectId).updateResource({ ...created, ...bot });
  return resource as Resource & { id: string };
}

/** POSTs JSON to a URL of the test server and returns status, headers and body text. */
export async function post(
  t: TestApp,
  path: string,
  body: unknown,
  contentType = 'application/json',
  auth: Record<string, string> = t.authHeaders,
): Promise<{ status: number; headers: Headers; text: string; json: () => unknown }> {
  const res = await fetch(new URL(path, t.baseUrl), {
    method: 'POST',
    headers: { ...auth, 'content-type': contentType },
    body: typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, json: () => JSON.parse(text) };
}

export async function get(
  t: TestApp,
  path: string,
): Promise<{ status: number; headers: Headers; text: string; json: () => unknown }> {
  const res = await fetch(new URL(path, t.baseUrl), { headers: t.authHeaders });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, json: () => JSON.parse(text) };
}

/** Deploys JavaScript or TypeScript code to a bot. */
export async function deploy(t: TestApp, botId: string, code: string, filename = 'index.ts'): Promise<void> {
  const res = await post(t, `fhir/R4/Bot/${botId}/$deploy`, { code, filename });
  if (res.status !== 200) {
    throw new Error(`deploy failed: ${res.status} ${res.text}`);
  }
}

export async function waitFor<T>(check: () => Promise<T | undefined> | T | undefined, timeoutMs = 15000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) {
      return value;
    }
    if (Date.now() > deadline) {
      throw new Error('timed out waiting');
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}
