// @vitest-environment jsdom
import { screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { MemoryRouter } from 'react-router';
import { useState, type ReactNode } from 'react';
import { describe, expect, it } from 'vitest';
import { mockClient, renderWithHearth, type Recorded } from '../../../packages/react/src/test/render.js';
import { FHIRCAST_ENABLED_EXTENSION, useFhircastPatientContext } from './fhircast.js';
import { SettingsPage } from './pages/SettingsPage.js';

const TOPIC = 'topic-of-dr-who';

function base64url(value: object): string {
  return btoa(JSON.stringify(value)).replace(/=+$/, '').replace(/\+/g, '-').replace(/\//g, '_');
}

/** An access token as the server signs it (the signature is not checked by the client). */
const TOKEN = `${base64url({ alg: 'ES256' })}.${base64url({
  exp: Math.floor(Date.now() / 1000) + 3600,
  'hub.topic': TOPIC,
  profile: 'Practitioner/pr1',
})}.c2lnbmF0dXJl`;

function practitioner(enabled?: boolean) {
  return {
    resourceType: 'Practitioner',
    id: 'pr1',
    meta: { versionId: '1' },
    name: [{ given: ['Ada'], family: 'Who' }],
    ...(enabled === undefined ? {} : { extension: [{ url: FHIRCAST_ENABLED_EXTENSION, valueBoolean: enabled }] }),
  };
}

function setup(ui: ReactNode, enabled: boolean | undefined) {
  let stored = practitioner(enabled);
  const { client, requests } = mockClient({
    'GET /auth/me': () => ({ profile: stored, project: { id: 'p1', name: 'Clinic' } }),
    'GET /fhir/R4/Practitioner/pr1': () => stored,
    'PUT /fhir/R4/Practitioner/pr1': (req) => {
      stored = { ...(req.body as typeof stored), meta: { versionId: '2' } };
      return stored;
    },
    [`POST /fhircast/${TOPIC}`]: () => undefined,
  });
  client.setAccessToken(TOKEN);
  const view = renderWithHearth(<MemoryRouter>{ui}</MemoryRouter>, client);
  return { requests, view, user: userEvent.setup({ delay: null }) };
}

function Chart({ patientId }: { patientId: string }): ReactNode {
  useFhircastPatientContext(patientId);
  return <p>Chart of {patientId}</p>;
}

/** Opens patient 7's chart, then 8's, then leaves charts, as the user moves around. */
function Moving(): ReactNode {
  const [at, setAt] = useState<string | undefined>('pat-7');
  return (
    <>
      {at && <Chart patientId={at} />}
      <button onClick={() => setAt('pat-8')}>Next patient</button>
      <button onClick={() => setAt(undefined)}>Home</button>
    </>
  );
}

function published(requests: Recorded[]) {
  return requests
    .filter((r) => r.method === 'POST' && r.url.pathname === `/fhircast/${TOPIC}`)
    .map((r) => r.body as { id: string; event: { 'hub.topic': string; 'hub.event': string; context: unknown[] } });
}

describe('FHIRcast in the app', () => {
  it('publishes Patient-open on opening a chart and Patient-close on leaving it, on the user topic', async () => {
    const { requests, user } = setup(<Moving />, true);
    await waitFor(() => expect(published(requests)).toHaveLength(1));
    const [open] = published(requests);
    expect(open.event).toEqual({
      'hub.topic': TOPIC,
      'hub.event': 'Patient-open',
      context: [{ key: 'patient', resource: { resourceType: 'Patient', id: 'pat-7' } }],
    });
    expect(open.id).toBeTruthy();
    await user.click(screen.getByRole('button', { name: 'Next patient' }));
    await waitFor(() => expect(published(requests)).toHaveLength(3));
    await user.click(screen.getByRole('button', { name: 'Home' }));
    await waitFor(() => expect(published(requests)).toHaveLength(4));
    expect(published(requests).map((e) => `${e.event['hub.event']} ${JSON.stringify(e.event.context)}`)).toEqual([
      expect.stringMatching(/^Patient-open .*pat-7/) as string,
      expect.stringMatching(/^Patient-close .*pat-7/) as string,
      expect.stringMatching(/^Patient-open .*pat-8/) as string,
      expect.stringMatching(/^Patient-close .*pat-8/) as string,
    ]);
  });

  it('publishes nothing for a user who has not turned FHIRcast on', async () => {
    const { requests } = setup(<Chart patientId="pat-7" />, undefined);
    await screen.findByText('Chart of pat-7');
    await waitFor(() => expect(requests.some((r) => r.url.pathname === '/fhir/R4/Practitioner/pr1')).toBe(true));
    await new Promise((r) => setTimeout(r, 50));
    expect(published(requests)).toHaveLength(0);
  });

  it('turns the setting on in Settings, stored on the profile', async () => {
    const { requests, user } = setup(<SettingsPage />, false);
    const toggle = await screen.findByRole('switch', { name: /^FHIRcast enabled/ });
    expect((toggle as HTMLInputElement).checked).toBe(false);
    expect(screen.getByText(TOPIC)).toBeTruthy();
    await user.click(toggle);
    await waitFor(() => expect(requests.some((r) => r.method === 'PUT')).toBe(true));
    const saved = requests.find((r) => r.method === 'PUT')?.body as ReturnType<typeof practitioner>;
    expect(saved.extension).toEqual([{ url: FHIRCAST_ENABLED_EXTENSION, valueBoolean: true }]);
    expect(saved.name).toEqual([{ given: ['Ada'], family: 'Who' }]);
    await waitFor(() =>
      expect((screen.getByRole('switch', { name: /^FHIRcast enabled/ }) as HTMLInputElement).checked).toBe(true),
    );
  });
});
