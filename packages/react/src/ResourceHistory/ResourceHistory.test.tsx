// @vitest-environment jsdom
import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { ResourceBlame } from '../ResourceBlame/ResourceBlame.js';
import { bundle, mockClient, renderWithHearth } from '../test/render.js';
import { blame, diffLines, versionText } from '../util/diff.js';
import { ResourceHistory } from './ResourceHistory.js';

const v1 = {
  resourceType: 'Patient',
  id: 'p1',
  meta: { versionId: 'a', lastUpdated: '2024-01-01T10:00:00Z' },
  gender: 'male',
  name: [{ family: 'Smith' }],
};
const v2 = { ...v1, meta: { versionId: 'b', lastUpdated: '2024-01-02T10:00:00Z' }, name: [{ family: 'Smyth' }] };
const v3 = { ...v2, meta: { versionId: 'c', lastUpdated: '2024-01-03T10:00:00Z' }, birthDate: '1990-01-01' };

describe('diff and blame', () => {
  it('diffs versions line by line, ignoring meta', () => {
    const lines = diffLines(versionText(v1), versionText(v2));
    expect(lines.filter((l) => l.kind === 'removed').map((l) => l.text.trim())).toEqual(['"family": "Smith"']);
    expect(lines.filter((l) => l.kind === 'added').map((l) => l.text.trim())).toEqual(['"family": "Smyth"']);
    expect(
      diffLines(versionText(v1), versionText({ ...v1, meta: { versionId: 'z' } })).every((l) => l.kind === 'same'),
    ).toBe(true);
  });

  it('blames each line on the version that last changed it', () => {
    const lines = blame([v1, v2, v3].map(versionText));
    const of = (needle: string) => lines.find((l) => l.text.includes(needle))?.version;
    expect(of('"gender"')).toBe(0);
    expect(of('"Smyth"')).toBe(1);
    expect(of('"birthDate"')).toBe(2);
  });
});

describe('ResourceHistory', () => {
  const history = { 'GET /fhir/R4/Patient/p1/_history': () => bundle([v3, v2, v1]) };

  it('lists versions and diffs the newest with the one before', async () => {
    const { client } = mockClient(history);
    renderWithHearth(<ResourceHistory resourceType="Patient" id="p1" />, client);
    const versions = await screen.findByRole('table', { name: 'Versions' });
    expect(within(versions).getAllByRole('row')).toHaveLength(4);
    const diff = screen.getByRole('region', { name: 'Diff' });
    expect(diff.querySelector('[data-diff="added"]')?.textContent).toContain('"birthDate": "1990-01-01"');
  });

  it('diffs any version with its predecessor on request', async () => {
    const user = userEvent.setup({ delay: null });
    const { client } = mockClient(history);
    renderWithHearth(<ResourceHistory resourceType="Patient" id="p1" />, client);
    const buttons = await screen.findAllByRole('button', { name: 'Diff with previous' });
    await user.click(buttons[1]);
    const diff = screen.getByRole('region', { name: 'Diff' });
    expect(diff.querySelector('[data-diff="removed"]')?.textContent).toContain('Smith');
    expect(diff.querySelector('[data-diff="added"]')?.textContent).toContain('Smyth');
  });

  it('blames lines in the blame view', async () => {
    const { client } = mockClient(history);
    renderWithHearth(<ResourceBlame resourceType="Patient" id="p1" />, client);
    const table = await screen.findByRole('table', { name: 'Blame' });
    expect(within(table).getByText(/v3 ·/)).toBeTruthy();
    expect(within(table).getByText(/v2 ·/)).toBeTruthy();
  });
});
