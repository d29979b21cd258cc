import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Resource } from '@hearth/core';
import { createTestApp, type TestApp } from '../test/app.js';
import { createTestProject } from '../test/auth.js';

let t: TestApp;
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
  'base64',
);

beforeAll(async () => {
  t = await createTestApp({ listen: true });
}, 60_000);
afterAll(async () => {
  await t?.close();
});

async function api(path: string, init: RequestInit & { headers?: Record<string, string> } = {}) {
  const res = await fetch(new URL(path, t.baseUrl), {
    ...init,
    headers: { ...t.authHeaders, 'content-type': 'application/fhir+json', ...init.headers },
  });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

async function uploadPng(): Promise<string> {
  const res = await fetch(new URL('fhir/R4/Binary', t.baseUrl), {
    method: 'POST',
    headers: { ...t.authHeaders, 'content-type': 'image/png' },
    body: PNG,
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as Resource).id as string;
}

function photoUrl(resource: Record<string, unknown>, i = 0): string {
  return (resource.photo as { url: string }[])[i].url;
}

describe('signed Binary URLs', () => {
  it('rewrites Attachment.url of a Binary to a signed URL that serves the content without a token', async () => {
    const binaryId = await uploadPng();
    const created = await api('fhir/R4/Patient', {
      method: 'POST',
      body: JSON.stringify({
        resourceType: 'Patient',
        name: [{ family: 'Photo' }],
        photo: [
          { contentType: 'image/png', url: `Binary/${binaryId}` },
          { contentType: 'image/png', url: `${t.baseUrl}fhir/R4/Binary/${binaryId}` },
          { contentType: 'image/png', url: 'https://elsewhere.example/Binary/abc' },
        ],
      }),
    });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    const read = await api(`fhir/R4/Patient/${id}`);
    const signed = photoUrl(read.body);
    expect(signed).toMatch(new RegExp(`^${t.baseUrl}storage/${binaryId}\\?exp=\\d+&sig=[\\w-]+$`));
    expect(photoUrl(read.body, 1)).toBe(signed);
    expect(photoUrl(read.body, 2)).toBe('https://elsewhere.example/Binary/abc');
    // Searches (and the create's own answer) too.
    expect(photoUrl(created.body)).toMatch(/storage\//);
    const search = await api(`fhir/R4/Patient?_id=${id}`);
    const entry = (search.body.entry as { resource: Record<string, unknown> }[])[0].resource;
    expect(photoUrl(entry)).toMatch(/storage\//);

    const content = await fetch(signed);
    expect(content.status).toBe(200);
    expect(content.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(await content.arrayBuffer()).equals(PNG)).toBe(true);
    const exp = Number(new URL(signed).searchParams.get('exp'));
    expect(exp * 1000).toBeGreaterThan(Date.now() + 3500_000);

    // Stored as written: the signed URL is never kept.
    const stored = await t.services.systemRepo(t.testProject.projectId).readResource('Patient', id);
    expect(photoUrl(stored.resource)).toBe(`Binary/${binaryId}`);
  });

  it('refuses a wrong, missing or expired signature with a 403 saying which', async () => {
    const binaryId = await uploadPng();
    const good = await t.services.binaryUrls.sign(binaryId);
    const tampered = good.replace(/sig=.{4}/, 'sig=AAAA');
    const wrong = await fetch(tampered);
    expect(wrong.status).toBe(403);
    expect(await wrong.text()).toContain('signature');
    expect((await fetch(`${t.baseUrl}storage/${binaryId}`)).status).toBe(403);
    const otherId = good.replace(binaryId, (await uploadPng()) as string);
    expect((await fetch(otherId)).status).toBe(403);
    const expired = await t.services.binaryUrls.sign(binaryId, -3600);
    const old = await fetch(expired);
    expect(old.status).toBe(403);
    expect(await old.text()).toContain('expired');
  });

  it('keeps Binary/{id} when a client writes back what it read', async () => {
    const binaryId = await uploadPng();
    const created = await api('fhir/R4/Patient', {
      method: 'POST',
      body: JSON.stringify({
        resourceType: 'Patient',
        photo: [{ contentType: 'image/png', url: `Binary/${binaryId}` }],
      }),
    });
    const read = await api(`fhir/R4/Patient/${created.body.id as string}`);
    expect(photoUrl(read.body)).toMatch(/storage\//);
    const updated = await api(`fhir/R4/Patient/${created.body.id as string}`, {
      method: 'PUT',
      body: JSON.stringify({ ...read.body, gender: 'female' }),
    });
    expect(updated.status).toBe(200);
    const stored = await t.services
      .systemRepo(t.testProject.projectId)
      .readResource('Patient', created.body.id as string);
    expect(photoUrl(stored.resource)).toBe(`Binary/${binaryId}`);
  });

  it("leaves a history entry's request.url (Binary/{id}) alone: it names the interaction, not content", async () => {
    const binaryId = await uploadPng();
    expect((await api(`fhir/R4/Binary/${binaryId}`, { method: 'DELETE' })).status).toBe(204);
    const history = await api(`fhir/R4/Binary/${binaryId}/_history`);
    const requests = (history.body.entry as { request: { method: string; url: string } }[]).map((e) => e.request);
    expect(requests).toEqual([
      { method: 'DELETE', url: `Binary/${binaryId}` },
      { method: 'POST', url: 'Binary' },
    ]);
  });

  it('signs nothing for a caller of another project', async () => {
    const binaryId = await uploadPng();
    const patient = await api('fhir/R4/Patient', {
      method: 'POST',
      body: JSON.stringify({
        resourceType: 'Patient',
        photo: [{ contentType: 'image/png', url: `Binary/${binaryId}` }],
      }),
    });
    const other = await createTestProject(t.app, t.services, 'Other clinic');
    const res = await fetch(new URL(`fhir/R4/Patient/${patient.body.id as string}`, t.baseUrl), {
      headers: other.headers,
    });
    expect(res.status).toBe(404);
    expect(await res.text()).not.toContain('storage/');
  });
});
