// Small synthetic DICOM Part 10 files for tests, built with dcmjs (no downloaded files).
import { createRequire } from 'node:module';

interface DcmjsWriter {
  data: {
    DicomDict: new (meta: Record<string, unknown>) => { dict: Record<string, unknown>; write(): ArrayBuffer };
    DicomMetaDictionary: { denaturalizeDataset(dataset: Record<string, unknown>): Record<string, unknown> };
  };
}
const dcmjs = createRequire(import.meta.url)('dcmjs') as DcmjsWriter;

export interface TestInstance {
  studyUid: string;
  seriesUid: string;
  sopUid: string;
  sopClassUid?: string;
  patientId?: string;
  modality?: string;
  seriesNumber?: number;
  instanceNumber?: number;
  timezone?: string;
  /** Leave an attribute out (to test refusals). */
  omit?: string[];
}

export function dicomFile(options: TestInstance): Buffer {
  const { DicomDict, DicomMetaDictionary } = dcmjs.data;
  const sopClassUid = options.sopClassUid ?? '1.2.840.10008.5.1.4.1.1.2';
  const elements: Record<string, unknown> = {
    SOPClassUID: sopClassUid,
    SOPInstanceUID: options.sopUid,
    StudyInstanceUID: options.studyUid,
    SeriesInstanceUID: options.seriesUid,
    PatientID: options.patientId ?? 'MRN-1',
    PatientName: [{ Alphabetic: 'Doe^Jane' }],
    Modality: options.modality ?? 'CT',
    SeriesNumber: String(options.seriesNumber ?? 1),
    InstanceNumber: String(options.instanceNumber ?? 1),
    StudyDate: '20261128',
    StudyTime: '093015',
    ...(options.timezone ? { TimezoneOffsetFromUTC: options.timezone } : {}),
    StudyDescription: 'CT chest',
    AccessionNumber: 'ACC-1',
    Rows: 2,
    Columns: 2,
    SamplesPerPixel: 1,
    PhotometricInterpretation: 'MONOCHROME2',
    BitsAllocated: 8,
    BitsStored: 8,
    HighBit: 7,
    PixelRepresentation: 0,
    PixelData: [new Uint8Array([1, 2, 3, 4]).buffer],
    _vrMap: { PixelData: 'OB' },
  };
  for (const key of options.omit ?? []) delete elements[key];
  const file = new DicomDict(
    DicomMetaDictionary.denaturalizeDataset({
      FileMetaInformationVersion: new Uint8Array([0, 1]).buffer,
      MediaStorageSOPClassUID: sopClassUid,
      MediaStorageSOPInstanceUID: options.sopUid,
      TransferSyntaxUID: '1.2.840.10008.1.2.1',
      ImplementationClassUID: '2.25.1',
    }),
  );
  file.dict = DicomMetaDictionary.denaturalizeDataset(elements);
  return Buffer.from(file.write());
}
