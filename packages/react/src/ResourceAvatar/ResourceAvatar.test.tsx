// @vitest-environment jsdom
import { screen, waitFor } from '@testing-library/react';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { bundle, mockClient, renderWithHearth } from '../test/render.js';
import { ResourceAvatar } from './ResourceAvatar.js';

describe('ResourceAvatar', () => {
  const created: Blob[] = [];
  beforeAll(() => {
    // jsdom has no object URLs: record what would be shown.
    URL.createObjectURL = vi.fn((blob: Blob) => {
      created.push(blob);
      return `blob:test/${created.length}`;
    });
    URL.revokeObjectURL = vi.fn();
  });
  afterAll(() => vi.restoreAllMocks());

  it("shows a photo stored as a Binary, fetched with the session's token", async () => {
    const { client, requests } = mockClient({
      'GET /fhir/R4/Binary/b1': () => 'PNG',
    });
    const patient = {
      resourceType: 'Patient',
      id: 'p1',
      name: [{ given: ['Ada'], family: 'Lovelace' }],
      photo: [{ contentType: 'image/png', url: 'Binary/b1' }],
    };
    renderWithHearth(<ResourceAvatar value={patient as never} />, client);
    const img = await screen.findByRole('img', { name: 'Ada Lovelace' });
    await waitFor(() => expect(img.getAttribute('src')).toBe('blob:test/1'));
    expect(requests.map((r) => r.url.pathname)).toContain('/fhir/R4/Binary/b1');
  });

  it('shows initials for a reference it reads, and a name for screen readers', async () => {
    // References on a page are resolved together: one _id search per type.
    const { client, requests } = mockClient({
      'GET /fhir/R4/Practitioner': () =>
        bundle([{ resourceType: 'Practitioner', id: 'd1', name: [{ given: ['Grace'], family: 'Hopper' }] }]),
    });
    renderWithHearth(<ResourceAvatar value={{ reference: 'Practitioner/d1' }} />, client);
    expect(await screen.findByText('GH')).toBeTruthy();
    expect(screen.getByTitle('Grace Hopper')).toBeTruthy();
    expect(requests.map((r) => r.url.searchParams.get('_id'))).toEqual(['d1']);
  });
});
