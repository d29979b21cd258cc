// @vitest-environment jsdom
import type { Composition } from '@hearth/core';
import { screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { bundle, mockClient, renderWithHearth } from '../test/render.js';
import { EncounterNote } from './EncounterNote.js';
import { draftNote, noteText, signNote, textToXhtml, xhtmlToText } from './note.js';

const refs = {
  subject: { reference: 'Patient/p1' },
  encounter: { reference: 'Encounter/e1' },
  author: { reference: 'Practitioner/d1', display: 'Dr Who' },
};

describe('note', () => {
  it('keeps text through XHTML narrative, escaped', () => {
    const text = 'Cough < 2 weeks & no fever.\nLungs clear.\n\nPlan: rest.';
    const div = textToXhtml(text);
    expect(div).toBe(
      '<div xmlns="http://www.w3.org/1999/xhtml"><p>Cough &lt; 2 weeks &amp; no fever.<br/>Lungs clear.</p><p>Plan: rest.</p></div>',
    );
    expect(xhtmlToText(div)).toBe(text);
  });

  it('signs with a legal attestation, and amends a signed note with a new one', () => {
    const draft = draftNote(undefined, { ...refs, text: 'First', now: '2024-01-01T10:00:00Z' });
    expect(draft).toMatchObject({
      status: 'preliminary',
      type: { coding: [{ code: '11506-3' }] },
      encounter: refs.encounter,
    });
    const signed = signNote({ ...draft, id: 'n1' }, { ...refs, text: 'First', now: '2024-01-01T10:05:00Z' });
    expect(signed.status).toBe('final');
    expect(signed.id).toBe('n1');
    expect(signed.attester).toEqual([{ mode: 'legal', time: '2024-01-01T10:05:00Z', party: refs.author }]);
    const amended = signNote(signed, { ...refs, text: 'Second', now: '2024-01-02T09:00:00Z' });
    expect(amended.status).toBe('amended');
    expect(amended.attester?.map((a) => a.time)).toEqual(['2024-01-01T10:05:00Z', '2024-01-02T09:00:00Z']);
    expect(noteText(amended)).toBe('Second');
  });
});

describe('EncounterNote', () => {
  it('writes, signs and amends the note, each a new version', async () => {
    const user = userEvent.setup({ delay: null });
    const versions: Composition[] = [];
    const store = (body: unknown) => {
      const c = { ...(body as Composition), id: 'n1', meta: { versionId: String(versions.length + 1) } };
      versions.unshift(c);
      return c;
    };
    const { client, requests } = mockClient({
      'GET /fhir/R4/Composition': () => bundle(versions.slice(0, 1)),
      'POST /fhir/R4/Composition': (req) => store(req.body),
      'PUT /fhir/R4/Composition/n1': (req) => store(req.body),
      'GET /fhir/R4/Composition/n1/_history': () => bundle(versions),
    });
    renderWithHearth(<EncounterNote {...refs} />, client);
    await user.type(await screen.findByLabelText('Note'), 'Sore throat, no fever.');
    await user.click(screen.getByRole('button', { name: 'Save draft' }));
    await screen.findByText('Draft');
    await user.click(screen.getByRole('button', { name: 'Sign note' }));
    await screen.findByText('Signed');
    expect((await screen.findByRole('status')).textContent).toMatch(/^Signed by Dr Who on /);
    expect(screen.getByLabelText('Signed note').textContent).toBe('Sore throat, no fever.');
    await user.click(screen.getByRole('button', { name: 'Amend note' }));
    const amended = screen.getByLabelText('Amended note');
    await user.clear(amended);
    await user.type(amended, 'Sore throat, mild fever.');
    await user.click(screen.getByRole('button', { name: 'Sign amendment' }));
    await screen.findByText('Amended');
    expect(screen.getByText('Version 3')).toBeTruthy();
    expect(requests.filter((r) => r.method === 'PUT').map((r) => (r.body as Composition).status)).toEqual([
      'final',
      'amended',
    ]);
    expect(versions[0].attester).toHaveLength(2);
    await waitFor(() => expect(screen.getByRole('table', { name: 'Versions' })).toBeTruthy());
  });
});
