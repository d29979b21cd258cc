// Merging one DICOM instance into an ImagingStudy (hl7.org/fhir/R4/imagingstudy.html): the study
// identified by its Study Instance UID, series by Series Instance UID, instances by SOP Instance UID.
import { HEARTH_FHIR_BASE } from '@hearth/definitions';
import type { Coding, ImagingStudy, Reference } from '@hearth/core';
import type { DicomInstanceSummary } from './dicom-file.js';

/** ImagingStudy.identifier system for the Study Instance UID (R4 ImagingStudy notes: urn:dicom:uid, value urn:oid:...). */
export const DICOM_UID_SYSTEM = 'urn:dicom:uid';
export const DICOM_MODALITY_SYSTEM = 'http://dicom.nema.org/resources/ontology/DCM';
/** On ImagingStudy.series.instance: the Binary that holds the instance's Part 10 file. */
export const INSTANCE_CONTENT_EXTENSION = `${HEARTH_FHIR_BASE}/StructureDefinition/imaging-instance-content`;

type Series = NonNullable<ImagingStudy['series']>[number];
type Instance = NonNullable<Series['instance']>[number];

export function studyIdentifierQuery(studyInstanceUid: string): string {
  return `identifier=${encodeURIComponent(`${DICOM_UID_SYSTEM}|urn:oid:${studyInstanceUid}`)}`;
}

/** The Binary reference of an instance already in the study, when it is there. */
export function findInstance(study: ImagingStudy, summary: DicomInstanceSummary): Instance | undefined {
  return study.series
    ?.find((s) => s.uid === summary.seriesInstanceUid)
    ?.instance?.find((i) => i.uid === summary.sopInstanceUid);
}

export function instanceContent(instance: Instance): string | undefined {
  return instance.extension?.find((e) => e.url === INSTANCE_CONTENT_EXTENSION)?.valueReference?.reference;
}

function modalityCoding(code: string): Coding {
  return { system: DICOM_MODALITY_SYSTEM, code };
}

/**
 * The study with the instance added (a new study when `current` is undefined). `subject` is the
 * patient found by PatientID, else a logical reference by that identifier (subject is 1..1).
 */
export function withInstance(
  current: ImagingStudy | undefined,
  summary: DicomInstanceSummary,
  subject: Reference,
  binaryId: string,
): ImagingStudy {
  const study: ImagingStudy = current
    ? structuredClone(current)
    : {
        resourceType: 'ImagingStudy',
        status: 'available',
        identifier: [{ system: DICOM_UID_SYSTEM, value: `urn:oid:${summary.studyInstanceUid}` }],
        subject,
      };
  // A patient registered after the first instances came: link the study to it now.
  if (!study.subject?.reference && subject.reference) study.subject = subject;
  if (!study.started && summary.started) study.started = summary.started;
  if (!study.description && summary.studyDescription) study.description = summary.studyDescription;
  if (summary.accessionNumber && !study.identifier?.some((i) => i.type?.coding?.some((c) => c.code === 'ACSN'))) {
    study.identifier = [
      ...(study.identifier ?? []),
      {
        type: { coding: [{ system: 'http://terminology.hl7.org/CodeSystem/v2-0203', code: 'ACSN' }] },
        value: summary.accessionNumber,
      },
    ];
  }
  const seriesList = (study.series ??= []);
  let series = seriesList.find((s) => s.uid === summary.seriesInstanceUid);
  if (!series) {
    series = { uid: summary.seriesInstanceUid, modality: modalityCoding(summary.modality ?? 'OT') };
    if (summary.seriesNumber !== undefined && summary.seriesNumber >= 0) series.number = summary.seriesNumber;
    if (summary.seriesDescription) series.description = summary.seriesDescription;
    if (summary.bodyPartExamined)
      series.bodySite = { system: DICOM_MODALITY_SYSTEM, display: summary.bodyPartExamined };
    seriesList.push(series);
  }
  const instance: Instance = {
    extension: [{ url: INSTANCE_CONTENT_EXTENSION, valueReference: { reference: `Binary/${binaryId}` } }],
    uid: summary.sopInstanceUid,
    sopClass: { system: 'urn:ietf:rfc:3986', code: `urn:oid:${summary.sopClassUid}` },
  };
  if (summary.instanceNumber !== undefined && summary.instanceNumber >= 0) instance.number = summary.instanceNumber;
  (series.instance ??= []).push(instance);
  series.numberOfInstances = series.instance.length;
  // ImagingStudy.modality: every modality of its series, once each.
  const modalities = [...new Set(seriesList.map((s) => s.modality.code).filter((c): c is string => !!c))];
  study.modality = modalities.map(modalityCoding);
  study.numberOfSeries = seriesList.length;
  study.numberOfInstances = seriesList.reduce((n, s) => n + (s.instance?.length ?? 0), 0);
  return study;
}
