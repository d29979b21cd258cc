// DICOM Part 10 files (PS3.10 §7: 128-byte preamble, "DICM", the file meta group in explicit VR
// little endian, then the data set in its transfer syntax), read and written with dcmjs.
import { createRequire } from 'node:module';

// dcmjs ships no type declarations: this is the part of its API used here.
interface DicomDictLike {
  meta: Record<string, unknown>;
  dict: Record<string, unknown>;
  write(options?: Record<string, unknown>): ArrayBuffer;
}
interface Dcmjs {
  data: {
    DicomMessage: { readFile(buffer: ArrayBuffer, options?: Record<string, unknown>): DicomDictLike };
    DicomDict: new (meta: Record<string, unknown>) => DicomDictLike;
    DicomMetaDictionary: {
      naturalizeDataset(dict: Record<string, unknown>): Record<string, unknown>;
      denaturalizeDataset(dataset: Record<string, unknown>): Record<string, unknown>;
    };
  };
}
const dcmjs = createRequire(import.meta.url)('dcmjs') as Dcmjs;
const { DicomDict, DicomMessage, DicomMetaDictionary } = dcmjs.data;

/** Hearth's implementation class UID in file meta groups (a UUID-derived 2.25 UID, PS3.5 §B.2). */
export const hearthImplementationClassUid = '2.25.175828474335213329478962153626118430097';

function arrayBufferOf(bytes: Uint8Array): ArrayBuffer {
  return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
}

/**
 * A Part 10 file around a data set exactly as it came over the network (its bytes are kept as
 * they are: nothing re-encoded, private elements and pixel data untouched).
 */
export function part10FromDataset(
  dataset: Uint8Array,
  transferSyntaxUid: string,
  sopClassUid: string,
  sopInstanceUid: string,
): Buffer {
  const meta = DicomMetaDictionary.denaturalizeDataset({
    FileMetaInformationVersion: new Uint8Array([0, 1]).buffer,
    MediaStorageSOPClassUID: sopClassUid,
    MediaStorageSOPInstanceUID: sopInstanceUid,
    TransferSyntaxUID: transferSyntaxUid,
    ImplementationClassUID: hearthImplementationClassUid,
    ImplementationVersionName: 'HEARTH_AGENT',
  });
  const header = new DicomDict(meta);
  header.dict = {};
  return Buffer.concat([Buffer.from(header.write()), dataset]);
}

export interface Part10 {
  transferSyntaxUid: string;
  /** The data set's attributes by keyword (dcmjs' naturalized form). */
  elements: Record<string, unknown>;
}

/** Reads a Part 10 file; throws when the bytes are not one. */
export function readPart10(bytes: Uint8Array): Part10 {
  const file = DicomMessage.readFile(arrayBufferOf(bytes));
  const meta = DicomMetaDictionary.naturalizeDataset(file.meta);
  const transferSyntaxUid = typeof meta.TransferSyntaxUID === 'string' ? meta.TransferSyntaxUID : '';
  if (!transferSyntaxUid) throw new Error('the file meta group names no transfer syntax');
  return { transferSyntaxUid, elements: DicomMetaDictionary.naturalizeDataset(file.dict) };
}

/** Writes a Part 10 file from naturalized attributes (used to build test instances and by tools). */
export function writePart10(elements: Record<string, unknown>, transferSyntaxUid = '1.2.840.10008.1.2.1'): Buffer {
  const file = new DicomDict(
    DicomMetaDictionary.denaturalizeDataset({
      FileMetaInformationVersion: new Uint8Array([0, 1]).buffer,
      MediaStorageSOPClassUID: elements.SOPClassUID,
      MediaStorageSOPInstanceUID: elements.SOPInstanceUID,
      TransferSyntaxUID: transferSyntaxUid,
      ImplementationClassUID: hearthImplementationClassUid,
    }),
  );
  file.dict = DicomMetaDictionary.denaturalizeDataset(elements);
  return Buffer.from(file.write());
}
