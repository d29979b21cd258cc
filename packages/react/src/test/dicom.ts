/**
 * Small DICOM Part 10 files for component tests, written byte by byte (PS3.10 7.1, PS3.5 7.1):
 * any transfer syntax header, implicit or explicit VR, little or big endian, any pixel layout.
 */
export interface TestImage {
  transferSyntax?: string;
  rows?: number;
  columns?: number;
  frames?: number;
  photometric?: string;
  samplesPerPixel?: number;
  planarConfiguration?: number;
  bitsAllocated?: number;
  bitsStored?: number;
  pixelRepresentation?: number;
  /** Stored values (8-bit or 16-bit samples, in order); written in the transfer syntax's byte order. */
  pixels?: number[];
  /** Raw Pixel Data bytes instead of `pixels` (e.g. a compressed stream). */
  pixelBytes?: Uint8Array;
  windowCenter?: string;
  windowWidth?: string;
  rescaleSlope?: string;
  rescaleIntercept?: string;
  modality?: string;
  patientName?: string;
}

type Value = string | number[] | Uint8Array;
interface El {
  tag: [number, number];
  vr: string;
  value: Value;
}

const LONG_VRS = new Set(['OB', 'OW', 'OF', 'SQ', 'UT', 'UN']);

function encodeValue(el: El, littleEndian: boolean): Uint8Array {
  if (el.value instanceof Uint8Array) {
    return el.value.length % 2 ? Uint8Array.from([...el.value, 0]) : el.value;
  }
  if (Array.isArray(el.value)) {
    const size = el.vr === 'UL' ? 4 : 2;
    const out = new Uint8Array(el.value.length * size);
    const view = new DataView(out.buffer);
    el.value.forEach((v, i) =>
      size === 4 ? view.setUint32(i * 4, v, littleEndian) : view.setUint16(i * 2, v, littleEndian),
    );
    return out;
  }
  const padded = el.value.length % 2 ? el.value + (el.vr === 'UI' ? '\0' : ' ') : el.value;
  return new TextEncoder().encode(padded);
}

function encode(elements: El[], explicit: boolean, littleEndian: boolean): Uint8Array {
  const parts: Uint8Array[] = [];
  for (const el of elements) {
    const value = encodeValue(el, littleEndian);
    const head = new Uint8Array(explicit ? (LONG_VRS.has(el.vr) ? 12 : 8) : 8);
    const view = new DataView(head.buffer);
    view.setUint16(0, el.tag[0], littleEndian);
    view.setUint16(2, el.tag[1], littleEndian);
    if (explicit) {
      head[4] = el.vr.charCodeAt(0);
      head[5] = el.vr.charCodeAt(1);
      if (LONG_VRS.has(el.vr)) view.setUint32(8, value.length, littleEndian);
      else view.setUint16(6, value.length, littleEndian);
    } else {
      view.setUint32(4, value.length, littleEndian);
    }
    parts.push(head, value);
  }
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

export function testDicom(options: TestImage = {}): Uint8Array {
  const transferSyntax = options.transferSyntax ?? '1.2.840.10008.1.2.1';
  const explicit = transferSyntax !== '1.2.840.10008.1.2';
  const littleEndian = transferSyntax !== '1.2.840.10008.1.2.2';
  const rows = options.rows ?? 2;
  const columns = options.columns ?? 2;
  const bitsAllocated = options.bitsAllocated ?? 8;
  const samples = options.samplesPerPixel ?? 1;
  const frames = options.frames ?? 1;
  const count = rows * columns * samples * frames;
  const pixels = options.pixels ?? Array.from({ length: count }, (_, i) => i % 256);
  let pixelBytes = options.pixelBytes;
  if (!pixelBytes) {
    pixelBytes = new Uint8Array(pixels.length * (bitsAllocated / 8));
    const view = new DataView(pixelBytes.buffer);
    pixels.forEach((v, i) =>
      bitsAllocated === 8 ? view.setUint8(i, v & 0xff) : view.setUint16(i * 2, v & 0xffff, littleEndian),
    );
  }
  const sopClass = '1.2.840.10008.5.1.4.1.1.7';
  const sopInstance = '2.25.123456789';
  const meta: El[] = [
    { tag: [0x0002, 0x0001], vr: 'OB', value: Uint8Array.from([0, 1]) },
    { tag: [0x0002, 0x0002], vr: 'UI', value: sopClass },
    { tag: [0x0002, 0x0003], vr: 'UI', value: sopInstance },
    { tag: [0x0002, 0x0010], vr: 'UI', value: transferSyntax },
  ];
  const metaBody = encode(meta, true, true);
  const groupLength = encode([{ tag: [0x0002, 0x0000], vr: 'UL', value: [metaBody.length] }], true, true);
  const dataset: El[] = [
    { tag: [0x0008, 0x0016], vr: 'UI', value: sopClass },
    { tag: [0x0008, 0x0018], vr: 'UI', value: sopInstance },
    { tag: [0x0008, 0x0020], vr: 'DA', value: '20261128' },
    { tag: [0x0008, 0x0060], vr: 'CS', value: options.modality ?? 'OT' },
    { tag: [0x0008, 0x1030], vr: 'LO', value: 'Test study' },
    { tag: [0x0008, 0x103e], vr: 'LO', value: 'Test series' },
    { tag: [0x0010, 0x0010], vr: 'PN', value: options.patientName ?? 'Doe^Jane' },
    { tag: [0x0010, 0x0020], vr: 'LO', value: 'MRN-1' },
    { tag: [0x0020, 0x0011], vr: 'IS', value: '3' },
    { tag: [0x0020, 0x0013], vr: 'IS', value: '7' },
    { tag: [0x0028, 0x0002], vr: 'US', value: [samples] },
    { tag: [0x0028, 0x0004], vr: 'CS', value: options.photometric ?? (samples === 3 ? 'RGB' : 'MONOCHROME2') },
    ...(samples === 3 ? [{ tag: [0x0028, 0x0006], vr: 'US', value: [options.planarConfiguration ?? 0] } as El] : []),
    ...(frames > 1 ? [{ tag: [0x0028, 0x0008], vr: 'IS', value: String(frames) } as El] : []),
    { tag: [0x0028, 0x0010], vr: 'US', value: [rows] },
    { tag: [0x0028, 0x0011], vr: 'US', value: [columns] },
    { tag: [0x0028, 0x0100], vr: 'US', value: [bitsAllocated] },
    { tag: [0x0028, 0x0101], vr: 'US', value: [options.bitsStored ?? bitsAllocated] },
    { tag: [0x0028, 0x0102], vr: 'US', value: [(options.bitsStored ?? bitsAllocated) - 1] },
    { tag: [0x0028, 0x0103], vr: 'US', value: [options.pixelRepresentation ?? 0] },
    ...(options.windowCenter ? [{ tag: [0x0028, 0x1050], vr: 'DS', value: options.windowCenter } as El] : []),
    ...(options.windowWidth ? [{ tag: [0x0028, 0x1051], vr: 'DS', value: options.windowWidth } as El] : []),
    ...(options.rescaleIntercept ? [{ tag: [0x0028, 0x1052], vr: 'DS', value: options.rescaleIntercept } as El] : []),
    ...(options.rescaleSlope ? [{ tag: [0x0028, 0x1053], vr: 'DS', value: options.rescaleSlope } as El] : []),
    { tag: [0x7fe0, 0x0010], vr: bitsAllocated === 8 ? 'OB' : 'OW', value: pixelBytes },
  ];
  const body = encode(dataset, explicit, littleEndian);
  const out = new Uint8Array(132 + groupLength.length + metaBody.length + body.length);
  out.set(new TextEncoder().encode('DICM'), 128);
  out.set(groupLength, 132);
  out.set(metaBody, 132 + groupLength.length);
  out.set(body, 132 + groupLength.length + metaBody.length);
  return out;
}
