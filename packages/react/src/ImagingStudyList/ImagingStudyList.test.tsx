// @vitest-environment jsdom
import { fireEvent, screen } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import { bundle, mockClient, renderWithHearth } from '../test/render.js';
import { IMAGING_INSTANCE_CONTENT } from './imaging.js';
import { ImagingStudyList } from './ImagingStudyList.js';

const content = (id: string) => [{ url: IMAGING_INSTANCE_CONTENT, valueReference: { reference: `Binary/${id}` } }];

const ct = {
  resourceType: 'ImagingStudy',
  id: 's1',
  status: 'available',
  subject: { reference: 'Patient/p1' },
  started: '2026-11-28T09:30:15Z',
  description: 'CT chest',
  identifier: [
    { system: 'urn:dicom:uid', value: 'urn:oid:1.2.3' },
    { type: { coding: [{ code: 'ACSN' }] }, value: 'ACC-1' },
  ],
  modality: [{ system: 'http://dicom.nema.org/resources/ontology/DCM', code: 'CT' }],
  numberOfSeries: 2,
  numberOfInstances: 3,
  series: [
    {
      uid: '1.2.3.2',
      number: 2,
      modality: { code: 'CT' },
      description: 'Lung window',
      numberOfInstances: 1,
      instance: [{ uid: '1.2.3.2.1', number: 1, sopClass: { code: 'urn:oid:1.2' }, extension: content('b3') }],
    },
    {
      uid: '1.2.3.1',
      number: 1,
      modality: { code: 'CT' },
      description: 'Axial',
      bodySite: { display: 'CHEST' },
      numberOfInstances: 2,
      instance: [
        { uid: '1.2.3.1.2', number: 2, sopClass: { code: 'urn:oid:1.2' }, extension: content('b2') },
        { uid: '1.2.3.1.1', number: 1, sopClass: { code: 'urn:oid:1.2' } },
      ],
    },
  ],
};

const xray = {
  resourceType: 'ImagingStudy',
  id: 's0',
  status: 'available',
  subject: { reference: 'Patient/p1' },
  started: '2025-01-02',
  series: [{ uid: '9.1', modality: { code: 'DX' }, instance: [] }],
};

describe('ImagingStudyList', () => {
  it("lists a patient's studies newest first with modality, date, description and counts", async () => {
    const { client, requests } = mockClient({ 'GET /fhir/R4/ImagingStudy': () => bundle([ct, xray]) });
    renderWithHearth(<ImagingStudyList patientId="p1" />, client);
    const study = await screen.findByRole('button', { name: /CT chest/ });
    expect(study.textContent).toContain('CT');
    expect(study.textContent).toMatch(/2 series · 3 instances · Accession ACC-1/);
    expect(study.textContent).toMatch(/2026/);
    // Counted from its series when the study does not say; no description: a generic title.
    const other = screen.getByRole('button', { name: /Imaging study/ });
    expect(other.textContent).toMatch(/DX.*1 series · 0 instances/);
    const query = requests[0].url.searchParams;
    expect(query.get('patient')).toBe('Patient/p1');
    expect(query.get('_sort')).toBe('-started');
  });

  it('expands a study into its series and a series into its instances, which open', async () => {
    const { client } = mockClient({ 'GET /fhir/R4/ImagingStudy': () => bundle([ct]) });
    const onOpen = vi.fn();
    renderWithHearth(<ImagingStudyList patientId="p1" onOpenInstance={onOpen} />, client);
    const study = await screen.findByRole('button', { name: /CT chest/ });
    expect(study.getAttribute('aria-expanded')).toBe('false');
    fireEvent.click(study);
    expect(study.getAttribute('aria-expanded')).toBe('true');
    // Series in their DICOM order.
    const series = screen.getAllByRole('button', { name: /^Series \d/ });
    expect(series.map((s) => s.textContent)).toEqual([
      'Series 1 · CT · Axial2 instances · CHEST',
      'Series 2 · CT · Lung window1 instance',
    ]);
    fireEvent.click(series[0]);
    const instances = screen.getByRole('list', { name: 'Instances of Series 1 · CT · Axial' });
    const buttons = Array.from(instances.querySelectorAll('button'));
    expect(buttons.map((b) => b.textContent)).toEqual(['Instance 1', 'Instance 2']);
    // Instance 1's file is not on the server: it cannot be opened.
    expect(buttons[0].disabled).toBe(true);
    fireEvent.click(buttons[1]);
    expect(onOpen).toHaveBeenCalledTimes(1);
    const target = onOpen.mock.calls[0][0];
    expect(target.binary).toBe('Binary/b2');
    expect(target.study.id).toBe('s1');
    expect(target.series.uid).toBe('1.2.3.1');
    expect(target.instance.uid).toBe('1.2.3.1.2');
  });

  it('lists the first instances of a long series, and the rest on demand', async () => {
    const long = {
      ...ct,
      series: [
        {
          uid: '5.1',
          number: 1,
          modality: { code: 'CT' },
          instance: Array.from({ length: 75 }, (_, i) => ({
            uid: `5.1.${i + 1}`,
            number: i + 1,
            sopClass: { code: 'urn:oid:1.2' },
            extension: content(`c${i}`),
          })),
        },
      ],
    };
    const { client } = mockClient({ 'GET /fhir/R4/ImagingStudy': () => bundle([long]) });
    renderWithHearth(<ImagingStudyList patientId="p1" onOpenInstance={() => undefined} />, client);
    fireEvent.click(await screen.findByRole('button', { name: /CT chest/ }));
    fireEvent.click(screen.getByRole('button', { name: /^Series 1/ }));
    expect(screen.getAllByRole('listitem')).toHaveLength(60);
    fireEvent.click(screen.getByRole('button', { name: 'Show all 75 instances' }));
    expect(screen.getAllByRole('listitem')).toHaveLength(75);
  });

  it('says when the patient has no imaging', async () => {
    const { client } = mockClient({ 'GET /fhir/R4/ImagingStudy': () => bundle([]) });
    renderWithHearth(<ImagingStudyList patientId="p1" />, client);
    expect(await screen.findByText('No imaging studies for this patient.')).toBeTruthy();
  });
});
