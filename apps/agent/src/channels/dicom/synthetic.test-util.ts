// Small synthetic DICOM instances for the tests, built with dcmjs (no downloaded files).
import { writePart10 } from './part10.js';

export interface SyntheticInstance {
  studyUid?: string;
  seriesUid?: string;
  sopUid?: string;
  sopClassUid?: string;
  patientId?: string;
  modality?: string;
  seriesNumber?: number;
  instanceNumber?: number;
}

let counter = 0;
function uid(): string {
  counter += 1;
  return `2.25.${Date.now()}${process.pid}${counter}`;
}

export function syntheticElements(options: SyntheticInstance = {}): Record<string, unknown> {
  return {
    SOPClassUID: options.sopClassUid ?? '1.2.840.10008.5.1.4.1.1.7', // Secondary Capture Image Storage
    SOPInstanceUID: options.sopUid ?? uid(),
    StudyInstanceUID: options.studyUid ?? uid(),
    SeriesInstanceUID: options.seriesUid ?? uid(),
    PatientID: options.patientId ?? 'MRN-1',
    PatientName: [{ Alphabetic: 'Doe^Jane' }],
    Modality: options.modality ?? 'OT',
    SeriesNumber: String(options.seriesNumber ?? 1),
    InstanceNumber: String(options.instanceNumber ?? 1),
    StudyDate: '20261128',
    StudyTime: '093000',
    StudyDescription: 'Synthetic study',
    Rows: 2,
    Columns: 2,
    SamplesPerPixel: 1,
    PhotometricInterpretation: 'MONOCHROME2',
    BitsAllocated: 8,
    BitsStored: 8,
    HighBit: 7,
    PixelRepresentation: 0,
    PixelData: [new Uint8Array([0, 64, 128, 255]).buffer],
    _vrMap: { PixelData: 'OB' },
  };
}

export function syntheticInstance(
  options: SyntheticInstance = {},
  transferSyntaxUid?: string,
): { file: Buffer; elements: Record<string, unknown> } {
  const elements = syntheticElements(options);
  return { file: writePart10(elements, transferSyntaxUid), elements };
}
