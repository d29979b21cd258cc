// What indexing needs of a DICOM Part 10 file (PS3.10): the study, series and instance it belongs
// to and the patient it names, read with dcmjs.
import { createRequire } from 'node:module';
import { badRequest, fail } from '@hearth/core';

// dcmjs ships no type declarations: this is the part of its API used here.
interface Dcmjs {
  data: {
    DicomMessage: {
      readFile(
        buffer: ArrayBuffer,
        options?: Record<string, unknown>,
      ): { meta: Record<string, unknown>; dict: Record<string, unknown> };
    };
    DicomMetaDictionary: { naturalizeDataset(dict: Record<string, unknown>): Record<string, unknown> };
  };
}
const dcmjs = createRequire(import.meta.url)('dcmjs') as Dcmjs;

export interface DicomInstanceSummary {
  studyInstanceUid: string;
  seriesInstanceUid: string;
  sopInstanceUid: string;
  sopClassUid: string;
  transferSyntaxUid: string;
  modality?: string;
  seriesNumber?: number;
  instanceNumber?: number;
  patientId?: string;
  patientName?: string;
  accessionNumber?: string;
  studyDescription?: string;
  seriesDescription?: string;
  bodyPartExamined?: string;
  /** FHIR dateTime from StudyDate/StudyTime (and TimezoneOffsetFromUTC: without it, the date alone). */
  started?: string;
}

/** A DICOM UID: digits in dot-separated components, no leading zeros, at most 64 characters (PS3.5 §9.1). */
const UID = /^(0|[1-9][0-9]*)(\.(0|[1-9][0-9]*))*$/;

function text(value: unknown): string | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  if (typeof v === 'number') return String(v);
  return typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined;
}

function integer(value: unknown): number | undefined {
  const n = Number(text(value));
  return Number.isInteger(n) ? n : undefined;
}

function uid(
  elements: Record<string, unknown>,
  keyword: string,
  meta?: Record<string, unknown>,
  metaKeyword?: string,
): string {
  const value = text(elements[keyword]) ?? (meta && metaKeyword ? text(meta[metaKeyword]) : undefined);
  if (!value) fail(badRequest(`The DICOM instance has no ${keyword}`, keyword));
  const clean = value.replace(/\0+$/, '');
  if (clean.length > 64 || !UID.test(clean))
    fail(badRequest(`The DICOM instance's ${keyword} '${clean}' is not a UID`, keyword));
  return clean;
}

function personName(value: unknown): string | undefined {
  const first = Array.isArray(value) ? value[0] : value;
  const alphabetic = typeof first === 'object' && first ? (first as { Alphabetic?: unknown }).Alphabetic : first;
  return typeof alphabetic === 'string' && alphabetic.trim() ? alphabetic.replace(/\^+/g, ' ').trim() : undefined;
}

/** DA (YYYYMMDD) and TM (HHMMSS.ffffff) with an offset (+HHMM) as a FHIR dateTime. */
export function dicomDateTime(
  date: string | undefined,
  time: string | undefined,
  offset: string | undefined,
): string | undefined {
  const d = /^(\d{4})(\d{2})(\d{2})$/.exec(date ?? '');
  if (!d) return undefined;
  const day = `${d[1]}-${d[2]}-${d[3]}`;
  const t = /^(\d{2})(\d{2})?(\d{2})?(\.\d{1,6})?$/.exec(time ?? '');
  const z = /^([+-])(\d{2})(\d{2})$/.exec(offset ?? '');
  // A FHIR dateTime with a time needs a zone (R4 datatypes: dateTime); DICOM's local time without one stays a date.
  if (!t || !z) return day;
  return `${day}T${t[1]}:${t[2] ?? '00'}:${t[3] ?? '00'}${t[4] ?? ''}${z[1]}${z[2]}:${z[3]}`;
}

/** Reads a Part 10 file; a body that is not one, or lacks the UIDs indexing needs, is a 400. */
export function readDicomInstance(bytes: Buffer): DicomInstanceSummary {
  if (bytes.length < 132 || bytes.toString('latin1', 128, 132) !== 'DICM') {
    fail(badRequest('The body is not a DICOM Part 10 file (no DICM prefix after the 128-byte preamble)', 'body'));
  }
  let meta: Record<string, unknown>;
  let elements: Record<string, unknown>;
  try {
    const file = dcmjs.data.DicomMessage.readFile(
      bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer,
      {
        // Pixel data is not needed for indexing; stopping before it also spares decoding large frames.
        untilTag: '7FE00010',
        includeUntilTagValue: false,
      },
    );
    meta = dcmjs.data.DicomMetaDictionary.naturalizeDataset(file.meta);
    elements = dcmjs.data.DicomMetaDictionary.naturalizeDataset(file.dict);
  } catch (error) {
    fail(
      badRequest(`The DICOM file could not be read: ${error instanceof Error ? error.message : String(error)}`, 'body'),
    );
  }
  return {
    studyInstanceUid: uid(elements, 'StudyInstanceUID'),
    seriesInstanceUid: uid(elements, 'SeriesInstanceUID'),
    sopInstanceUid: uid(elements, 'SOPInstanceUID', meta, 'MediaStorageSOPInstanceUID'),
    sopClassUid: uid(elements, 'SOPClassUID', meta, 'MediaStorageSOPClassUID'),
    transferSyntaxUid: text(meta.TransferSyntaxUID) ?? '',
    modality: text(elements.Modality),
    seriesNumber: integer(elements.SeriesNumber),
    instanceNumber: integer(elements.InstanceNumber),
    patientId: text(elements.PatientID),
    patientName: personName(elements.PatientName),
    accessionNumber: text(elements.AccessionNumber),
    studyDescription: text(elements.StudyDescription),
    seriesDescription: text(elements.SeriesDescription),
    bodyPartExamined: text(elements.BodyPartExamined),
    started: dicomDateTime(text(elements.StudyDate), text(elements.StudyTime), text(elements.TimezoneOffsetFromUTC)),
  };
}
