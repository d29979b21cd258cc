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
  /** The image (default: 2 × 2, 8-bit MONOCHROME2, values 1 to 4). */
  image?: TestPixels;
}

/** A single-frame MONOCHROME2 image: 8-bit (Uint8Array) or 16-bit unsigned (Uint16Array) stored values, row by row. */
export interface TestPixels {
  rows: number;
  columns: number;
  pixels: Uint8Array | Uint16Array;
  windowCenter?: number;
  windowWidth?: number;
  rescaleIntercept?: number;
  rescaleSlope?: number;
}

/** A rows × columns 16-bit image like a CT slice: a bright disc on a gradient, in Hounsfield units after rescale. */
export function testCtImage(rows = 64, columns = 64): TestPixels {
  const pixels = new Uint16Array(rows * columns);
  for (let y = 0; y < rows; y++) {
    for (let x = 0; x < columns; x++) {
      const inside = (x - columns / 2) ** 2 + (y - rows / 2) ** 2 < (Math.min(rows, columns) / 4) ** 2;
      // Stored values with intercept -1024: air (-1000 HU) at the left to soft tissue, bone (+700 HU) in the disc.
      pixels[y * columns + x] = inside ? 1724 : 24 + Math.round((x / columns) * 1040);
    }
  }
  return { rows, columns, pixels, windowCenter: 40, windowWidth: 400, rescaleIntercept: -1024, rescaleSlope: 1 };
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
    ...pixelElements(options.image ?? { rows: 2, columns: 2, pixels: new Uint8Array([1, 2, 3, 4]) }),
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

function pixelElements(image: TestPixels): Record<string, unknown> {
  const bits = image.pixels instanceof Uint16Array ? 16 : 8;
  const pixels = image.pixels.slice();
  return {
    Rows: image.rows,
    Columns: image.columns,
    SamplesPerPixel: 1,
    PhotometricInterpretation: 'MONOCHROME2',
    BitsAllocated: bits,
    BitsStored: bits,
    HighBit: bits - 1,
    PixelRepresentation: 0,
    ...(image.windowCenter !== undefined ? { WindowCenter: String(image.windowCenter) } : {}),
    ...(image.windowWidth !== undefined ? { WindowWidth: String(image.windowWidth) } : {}),
    ...(image.rescaleIntercept !== undefined ? { RescaleIntercept: String(image.rescaleIntercept) } : {}),
    ...(image.rescaleSlope !== undefined ? { RescaleSlope: String(image.rescaleSlope) } : {}),
    PixelData: [pixels.buffer],
    _vrMap: { PixelData: bits === 16 ? 'OW' : 'OB' },
  };
}
