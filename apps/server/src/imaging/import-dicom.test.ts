import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ImagingStudy } from '@hearth/core';
import { createTestApp, type TestApp } from '../test/app.js';
import { dicomFile } from './testing.js';
import { INSTANCE_CONTENT_EXTENSION } from './imaging-study.js';
import { dicomDateTime } from './dicom-file.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ listen: true });
});
afterAll(async () => {
  await t?.close();
});

/** A fresh UID under 2.25 (a UUID as a decimal integer, PS3.5 §B.2). */
function uid(): string {
  return `2.25.${BigInt(`0x${randomUUID().replace(/-/g, '')}`).toString()}`;
}

async function importDicom(body: Buffer | string, contentType = 'application/dicom') {
  const res = await fetch(new URL('fhir/R4/ImagingStudy/$import-dicom', t.baseUrl), {
    method: 'POST',
    headers: { ...t.authHeaders, 'content-type': contentType },
    body,
  });
  return {
    status: res.status,
    json: (await res.json()) as ImagingStudy & { issue?: { details?: { text?: string }; expression?: string[] }[] },
    location: res.headers.get('location'),
  };
}

async function fhir(path: string, init: RequestInit = {}) {
  const res = await fetch(new URL(`fhir/R4/${path}`, t.baseUrl), {
    ...init,
    headers: { ...t.authHeaders, 'content-type': 'application/fhir+json', ...init.headers },
  });
  return { status: res.status, body: Buffer.from(await res.arrayBuffer()), headers: res.headers };
}

describe('ImagingStudy/$import-dicom', () => {
  it('stores the file as a Binary and creates the study with its series, instance and counts', async () => {
    const studyUid = uid();
    const seriesUid = uid();
    const sopUid = uid();
    const file = dicomFile({
      studyUid,
      seriesUid,
      sopUid,
      patientId: `NOPE-${randomUUID()}`,
      seriesNumber: 3,
      instanceNumber: 7,
    });
    const { status, json: study, location } = await importDicom(file);
    expect(status).toBe(201);
    expect(location).toContain(`ImagingStudy/${study.id}`);
    expect(study.status).toBe('available');
    expect(study.identifier).toContainEqual({ system: 'urn:dicom:uid', value: `urn:oid:${studyUid}` });
    expect(study.identifier).toContainEqual(expect.objectContaining({ value: 'ACC-1' }));
    expect(study.started).toBe('2026-11-28'); // no TimezoneOffsetFromUTC: the date alone
    expect(study.description).toBe('CT chest');
    expect(study.numberOfSeries).toBe(1);
    expect(study.numberOfInstances).toBe(1);
    expect(study.modality).toEqual([{ system: 'http://dicom.nema.org/resources/ontology/DCM', code: 'CT' }]);
    // No Patient has that identifier: a logical reference keeps what the file said.
    expect(study.subject.reference).toBeUndefined();
    expect(study.subject.identifier?.value).toMatch(/^NOPE-/);
    expect(study.subject.display).toBe('Doe Jane');
    const [series] = study.series!;
    expect(series).toMatchObject({ uid: seriesUid, number: 3, numberOfInstances: 1, modality: { code: 'CT' } });
    const [instance] = series.instance!;
    expect(instance).toMatchObject({
      uid: sopUid,
      number: 7,
      sopClass: { system: 'urn:ietf:rfc:3986', code: 'urn:oid:1.2.840.10008.5.1.4.1.1.2' },
    });
    const binaryRef = instance.extension?.find((e) => e.url === INSTANCE_CONTENT_EXTENSION)?.valueReference?.reference;
    expect(binaryRef).toMatch(/^Binary\//);
    const content = await fhir(binaryRef!, { headers: { accept: 'application/dicom' } });
    expect(content.status).toBe(200);
    expect(content.body.equals(file)).toBe(true);
    const binary = JSON.parse(
      (await fhir(binaryRef!, { headers: { accept: 'application/fhir+json' } })).body.toString(),
    );
    expect(binary.securityContext).toEqual({ reference: `ImagingStudy/${study.id}` });
  });

  it('links the study to the Patient with the PatientID as identifier, and adds series and instances to one study', async () => {
    const mrn = `MRN-${randomUUID()}`;
    const patient = JSON.parse(
      (
        await fhir('Patient', {
          method: 'POST',
          body: JSON.stringify({ resourceType: 'Patient', identifier: [{ system: 'urn:example:mrn', value: mrn }] }),
        })
      ).body.toString(),
    );
    const studyUid = uid();
    const ct = uid();
    const mr = uid();
    await importDicom(dicomFile({ studyUid, seriesUid: ct, sopUid: uid(), patientId: mrn, timezone: '+0100' }));
    await importDicom(dicomFile({ studyUid, seriesUid: ct, sopUid: uid(), patientId: mrn, instanceNumber: 2 }));
    const { json: study } = await importDicom(
      dicomFile({ studyUid, seriesUid: mr, sopUid: uid(), patientId: mrn, modality: 'MR', seriesNumber: 2 }),
    );
    expect(study.subject.reference).toBe(`Patient/${patient.id}`);
    expect(study.started).toBe('2026-11-28T09:30:15+01:00');
    expect(study.numberOfSeries).toBe(2);
    expect(study.numberOfInstances).toBe(3);
    expect(study.modality?.map((m) => m.code)).toEqual(['CT', 'MR']);
    expect(study.series?.map((s) => [s.uid, s.numberOfInstances])).toEqual([
      [ct, 2],
      [mr, 1],
    ]);
    const found = JSON.parse(
      (
        await fhir(`ImagingStudy?identifier=${encodeURIComponent(`urn:dicom:uid|urn:oid:${studyUid}`)}`)
      ).body.toString(),
    );
    expect(found.total ?? found.entry.length).toBe(1);
    const byPatient = JSON.parse((await fhir(`ImagingStudy?subject=Patient/${patient.id}`)).body.toString());
    expect(byPatient.entry).toHaveLength(1);
  });

  it('finds the patient by a PatientID holding search special characters (, | $)', async () => {
    // (A backslash cannot occur: it separates values in DICOM.)
    const mrn = `A,B|C$D-${randomUUID()}`;
    const patient = JSON.parse(
      (
        await fhir('Patient', {
          method: 'POST',
          body: JSON.stringify({ resourceType: 'Patient', identifier: [{ value: mrn }] }),
        })
      ).body.toString(),
    );
    const { json: study } = await importDicom(
      dicomFile({ studyUid: uid(), seriesUid: uid(), sopUid: uid(), patientId: mrn }),
    );
    expect(study.subject.reference).toBe(`Patient/${patient.id}`);
  });

  it('takes a re-sent instance once: 200, the study unchanged, no second Binary', async () => {
    const file = dicomFile({ studyUid: uid(), seriesUid: uid(), sopUid: uid() });
    const first = await importDicom(file);
    const again = await importDicom(file);
    expect(first.status).toBe(201);
    expect(again.status).toBe(200);
    expect(again.json.meta?.versionId).toBe(first.json.meta?.versionId);
    expect(again.json.numberOfInstances).toBe(1);
  });

  it('indexes instances of one study that arrive at once, one after the other, into one study', async () => {
    const studyUid = uid();
    const series = [uid(), uid()];
    const files = Array.from({ length: 10 }, (_, i) =>
      dicomFile({ studyUid, seriesUid: series[i % 2], sopUid: uid(), instanceNumber: i + 1 }),
    );
    const results = await Promise.all(files.map((f) => importDicom(f)));
    expect(results.map((r) => r.status)).toEqual(Array(10).fill(201));
    expect(new Set(results.map((r) => r.json.id)).size).toBe(1);
    const study = JSON.parse((await fhir(`ImagingStudy/${results[0].json.id}`)).body.toString()) as ImagingStudy;
    expect(study.numberOfInstances).toBe(10);
    expect(study.numberOfSeries).toBe(2);
    expect(study.series?.map((s) => s.numberOfInstances)).toEqual([5, 5]);
  });

  it('answers 400 with an OperationOutcome for a body that is not DICOM, or lacks a UID', async () => {
    const text = await importDicom('hello', 'text/plain');
    expect(text.status).toBe(400);
    expect(text.json.issue?.[0].details?.text).toMatch(/application\/dicom/);
    const garbage = await importDicom(Buffer.from('not a dicom file at all'));
    expect(garbage.status).toBe(400);
    expect(garbage.json.issue?.[0].details?.text).toMatch(/not a DICOM Part 10 file/);
    const truncated = dicomFile({ studyUid: uid(), seriesUid: uid(), sopUid: uid() });
    const cut = await importDicom(truncated.subarray(0, 200));
    expect(cut.status).toBe(400);
    expect(cut.json.resourceType).toBe('OperationOutcome');
    const noStudy = await importDicom(
      dicomFile({ studyUid: uid(), seriesUid: uid(), sopUid: uid(), omit: ['StudyInstanceUID'] }),
    );
    expect(noStudy.status).toBe(400);
    expect(noStudy.json.issue?.[0].details?.text).toMatch(/StudyInstanceUID/);
    const badUid = await importDicom(dicomFile({ studyUid: '1.2.03', seriesUid: uid(), sopUid: uid() }));
    expect(badUid.status).toBe(400);
    expect(badUid.json.issue?.[0].expression).toEqual(['StudyInstanceUID']);
  });
});

describe('dicomDateTime', () => {
  it('turns DA/TM with an offset into a FHIR dateTime, and keeps the date alone without one', () => {
    expect(dicomDateTime('20261128', '0930', '-0500')).toBe('2026-11-28T09:30:00-05:00');
    expect(dicomDateTime('20261128', '093015.123', '+0000')).toBe('2026-11-28T09:30:15.123+00:00');
    expect(dicomDateTime('20261128', '093015', undefined)).toBe('2026-11-28');
    expect(dicomDateTime('2026', undefined, undefined)).toBeUndefined();
  });
});
