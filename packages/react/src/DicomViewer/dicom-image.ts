// A DICOM Part 10 instance read for display: its main attributes, and its frames as grey levels
// or RGB (PS3.3 C.7.6.3 Image Pixel module, C.11.2 VOI LUT). Parsing is dicom-parser's (loaded on
// demand, so it stays out of the app's main chunk); decoding and windowing are done here.
import type { DataSet } from 'dicom-parser';

export const TRANSFER_SYNTAXES: Record<string, string> = {
  '1.2.840.10008.1.2': 'Implicit VR Little Endian',
  '1.2.840.10008.1.2.1': 'Explicit VR Little Endian',
  '1.2.840.10008.1.2.1.99': 'Deflated Explicit VR Little Endian',
  '1.2.840.10008.1.2.2': 'Explicit VR Big Endian',
  '1.2.840.10008.1.2.4.50': 'JPEG Baseline (Process 1)',
  '1.2.840.10008.1.2.4.51': 'JPEG Extended (Process 2 & 4)',
  '1.2.840.10008.1.2.4.57': 'JPEG Lossless, Non-Hierarchical (Process 14)',
  '1.2.840.10008.1.2.4.70': 'JPEG Lossless, First-Order Prediction (Process 14, SV1)',
  '1.2.840.10008.1.2.4.80': 'JPEG-LS Lossless',
  '1.2.840.10008.1.2.4.81': 'JPEG-LS Lossy (Near-Lossless)',
  '1.2.840.10008.1.2.4.90': 'JPEG 2000 Image Compression (Lossless Only)',
  '1.2.840.10008.1.2.4.91': 'JPEG 2000 Image Compression',
  '1.2.840.10008.1.2.4.100': 'MPEG2 Main Profile / Main Level',
  '1.2.840.10008.1.2.4.102': 'MPEG-4 AVC/H.264 High Profile / Level 4.1',
  '1.2.840.10008.1.2.4.201': 'High-Throughput JPEG 2000 (Lossless Only)',
  '1.2.840.10008.1.2.4.203': 'High-Throughput JPEG 2000',
  '1.2.840.10008.1.2.5': 'RLE Lossless',
};

/** The transfer syntaxes whose pixel data this module decodes: native (uncompressed) ones. */
const NATIVE = new Set(['1.2.840.10008.1.2', '1.2.840.10008.1.2.1', '1.2.840.10008.1.2.2']);

export function transferSyntaxName(uid: string): string {
  return TRANSFER_SYNTAXES[uid] ? `${TRANSFER_SYNTAXES[uid]} (${uid})` : uid || 'unknown';
}

export interface DicomTags {
  patientName?: string;
  patientId?: string;
  studyDescription?: string;
  studyDate?: string;
  seriesDescription?: string;
  seriesNumber?: string;
  instanceNumber?: string;
  modality?: string;
  sopClassUid?: string;
}

export interface Window {
  center: number;
  width: number;
}

export interface DicomImage {
  transferSyntaxUid: string;
  tags: DicomTags;
  rows: number;
  columns: number;
  frames: number;
  photometric: string;
  bitsAllocated: number;
  /** Why the pixels cannot be shown here (a compressed transfer syntax, no pixel data...); undefined when they can. */
  unsupported?: string;
  /** Grey-level images: modality values (stored value × slope + intercept) of each frame. */
  grey?: Float32Array[];
  /** Colour images: RGB triplets of each frame. */
  rgb?: Uint8Array[];
  /** The window in the file (Window Center/Width, first of each), if any. */
  fileWindow?: Window;
  /** The smallest and largest modality values over all frames (grey-level images). */
  range?: { min: number; max: number };
}

interface DicomParserModule {
  parseDicom(bytes: Uint8Array): DataSet;
}

let parser: Promise<DicomParserModule> | undefined;
function loadParser(): Promise<DicomParserModule> {
  // A UMD bundle: its exports arrive as the default export (or the namespace, depending on the bundler).
  parser ??= import('dicom-parser').then((m) => ((m as { default?: DicomParserModule }).default ?? m) as never);
  return parser;
}

function text(data: DataSet, tag: string): string | undefined {
  const value = data.string(tag)?.trim();
  return value ? value : undefined;
}

/** A person name (PN) as people read it: 'Doe^Jane' is 'Jane Doe'. */
export function personName(value: string | undefined): string | undefined {
  if (!value) return undefined;
  const alphabetic = value.split('=')[0];
  const [family = '', given = '', middle = '', prefix = '', suffix = ''] = alphabetic.split('^');
  return [prefix, given, middle, family, suffix].filter((p) => p.trim()).join(' ') || undefined;
}

/** A DICOM date (DA, YYYYMMDD) as an ISO date, or the text as it is when it is not one. */
export function dicomDate(value: string | undefined): string | undefined {
  const match = value && /^(\d{4})(\d{2})(\d{2})$/.exec(value);
  return match ? `${match[1]}-${match[2]}-${match[3]}` : value;
}

/** Reads a Part 10 file. Throws when it is not one; answers `unsupported` when it is, but its pixels cannot be decoded here. */
export async function readDicom(bytes: Uint8Array): Promise<DicomImage> {
  const { parseDicom } = await loadParser();
  let data: DataSet;
  try {
    data = parseDicom(bytes);
  } catch (err) {
    // dicom-parser throws strings as well as errors.
    const reason = err instanceof Error ? err.message : typeof err === 'string' ? err : 'unreadable';
    throw new Error(`Not a readable DICOM file: ${reason.replace(/^dicomParser\.\w+: /, '')}`);
  }
  const transferSyntaxUid = text(data, 'x00020010') ?? '1.2.840.10008.1.2';
  const image: DicomImage = {
    transferSyntaxUid,
    tags: {
      patientName: personName(text(data, 'x00100010')),
      patientId: text(data, 'x00100020'),
      studyDescription: text(data, 'x00081030'),
      studyDate: dicomDate(text(data, 'x00080020')),
      seriesDescription: text(data, 'x0008103e'),
      seriesNumber: text(data, 'x00200011'),
      instanceNumber: text(data, 'x00200013'),
      modality: text(data, 'x00080060'),
      sopClassUid: text(data, 'x00080016'),
    },
    rows: data.uint16('x00280010') ?? 0,
    columns: data.uint16('x00280011') ?? 0,
    frames: Math.max(1, parseInt(text(data, 'x00280008') ?? '1', 10) || 1),
    photometric: text(data, 'x00280004') ?? '',
    bitsAllocated: data.uint16('x00280100') ?? 0,
  };
  const pixelData = data.elements.x7fe00010 ?? data.elements.x7fe00008 ?? data.elements.x7fe00009;
  if (!pixelData) return { ...image, unsupported: 'The file holds no image (no Pixel Data).' };
  if (!NATIVE.has(transferSyntaxUid) || pixelData.encapsulatedPixelData) {
    return {
      ...image,
      unsupported: `Its pixel data is encoded as ${transferSyntaxName(transferSyntaxUid)}, which this viewer does not decode.`,
    };
  }
  if (!image.rows || !image.columns) return { ...image, unsupported: 'The file gives no image size (Rows, Columns).' };
  const samples = data.uint16('x00280002') ?? 1;
  const bigEndian = transferSyntaxUid === '1.2.840.10008.1.2.2';
  const frameLength = image.rows * image.columns * samples * (image.bitsAllocated / 8);
  const available = Math.min(pixelData.length, bytes.length - pixelData.dataOffset);
  if (![8, 16].includes(image.bitsAllocated)) {
    return { ...image, unsupported: `This viewer shows 8- and 16-bit pixels, not ${image.bitsAllocated}-bit ones.` };
  }
  if (frameLength * image.frames > available) {
    return {
      ...image,
      unsupported: `The pixel data holds ${available} bytes, fewer than the ${frameLength * image.frames} its size (${image.columns} × ${image.rows} × ${image.frames} frames) needs.`,
    };
  }
  const frameBytes = (i: number) =>
    bytes.subarray(pixelData.dataOffset + i * frameLength, pixelData.dataOffset + (i + 1) * frameLength);

  if (samples === 1 && ['MONOCHROME1', 'MONOCHROME2'].includes(image.photometric)) {
    const bitsStored = data.uint16('x00280101') ?? image.bitsAllocated;
    const signed = data.uint16('x00280103') === 1;
    const slope = parseFloat(text(data, 'x00281053') ?? '1') || 1;
    const intercept = parseFloat(text(data, 'x00281052') ?? '0') || 0;
    let min = Infinity;
    let max = -Infinity;
    const grey = Array.from({ length: image.frames }, (_, i) => {
      const values = storedValues(frameBytes(i), image.bitsAllocated, bitsStored, signed, bigEndian);
      const out = new Float32Array(values.length);
      for (let p = 0; p < values.length; p++) {
        const v = values[p] * slope + intercept;
        out[p] = v;
        if (v < min) min = v;
        if (v > max) max = v;
      }
      return out;
    });
    const center = data.floatString('x00281050', 0);
    const width = data.floatString('x00281051', 0);
    return {
      ...image,
      grey,
      range: { min, max },
      ...(center !== undefined && width !== undefined && width >= 1 ? { fileWindow: { center, width } } : {}),
    };
  }
  if (samples === 3 && image.bitsAllocated === 8 && ['RGB', 'YBR_FULL'].includes(image.photometric)) {
    const planar = data.uint16('x00280006') === 1;
    const rgb = Array.from({ length: image.frames }, (_, i) =>
      toRgb(frameBytes(i), image.rows * image.columns, planar, image.photometric === 'YBR_FULL'),
    );
    return { ...image, rgb };
  }
  return {
    ...image,
    unsupported: `This viewer shows MONOCHROME1, MONOCHROME2, RGB and YBR_FULL images, not ${image.photometric || 'this'} ${image.bitsAllocated}-bit with ${samples} samples per pixel.`,
  };
}

/** The stored values of a frame: only the Bits Stored low bits count, sign-extended when signed. */
function storedValues(
  bytes: Uint8Array,
  bitsAllocated: number,
  bitsStored: number,
  signed: boolean,
  bigEndian: boolean,
): Int32Array {
  const count = bytes.length / (bitsAllocated / 8);
  const out = new Int32Array(count);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const mask = bitsStored >= 32 ? -1 : (1 << bitsStored) - 1;
  const signBit = 1 << (bitsStored - 1);
  for (let i = 0; i < count; i++) {
    let v = bitsAllocated === 8 ? view.getUint8(i) : view.getUint16(i * 2, !bigEndian);
    v &= mask;
    if (signed && v & signBit) v -= signBit * 2;
    out[i] = v;
  }
  return out;
}

/** RGB triplets from colour-by-pixel or colour-by-plane samples; YBR_FULL converted (PS3.3 C.7.6.3.1.2). */
function toRgb(bytes: Uint8Array, pixels: number, planar: boolean, ybr: boolean): Uint8Array {
  const out = new Uint8Array(pixels * 3);
  for (let p = 0; p < pixels; p++) {
    let a = planar ? bytes[p] : bytes[p * 3];
    let b = planar ? bytes[pixels + p] : bytes[p * 3 + 1];
    let c = planar ? bytes[2 * pixels + p] : bytes[p * 3 + 2];
    if (ybr) {
      const [y, cb, cr] = [a, b - 128, c - 128];
      a = clamp(y + 1.402 * cr);
      b = clamp(y - 0.344136 * cb - 0.714136 * cr);
      c = clamp(y + 1.772 * cb);
    }
    out[p * 3] = a;
    out[p * 3 + 1] = b;
    out[p * 3 + 2] = c;
  }
  return out;
}

function clamp(v: number): number {
  return Math.max(0, Math.min(255, Math.round(v)));
}

/** The window a grey-level image opens with: the file's, else one spanning its values. */
export function initialWindow(image: DicomImage): Window {
  if (image.fileWindow) return image.fileWindow;
  const { min, max } = image.range ?? { min: 0, max: 255 };
  return { center: (min + max + 1) / 2, width: Math.max(1, max - min + 1) };
}

/**
 * One frame as RGBA (an ImageData's data): grey levels through the linear VOI LUT function
 * (PS3.3 C.11.2.1.2.1) and inverted for MONOCHROME1; colour images as they are.
 */
export function renderFrame(image: DicomImage, frame: number, window: Window, out: Uint8ClampedArray): void {
  const pixels = image.rows * image.columns;
  if (image.rgb) {
    const rgb = image.rgb[frame];
    for (let p = 0; p < pixels; p++) {
      out[p * 4] = rgb[p * 3];
      out[p * 4 + 1] = rgb[p * 3 + 1];
      out[p * 4 + 2] = rgb[p * 3 + 2];
      out[p * 4 + 3] = 255;
    }
    return;
  }
  const values = image.grey?.[frame];
  if (!values) throw new Error(`No frame ${frame + 1}`);
  const invert = image.photometric === 'MONOCHROME1';
  const c = window.center - 0.5;
  const w = Math.max(1, window.width) - 1;
  const low = c - w / 2;
  const high = c + w / 2;
  for (let p = 0; p < pixels; p++) {
    const x = values[p];
    let level = x <= low ? 0 : x > high ? 255 : w === 0 ? 255 : ((x - c) / w + 0.5) * 255;
    if (invert) level = 255 - level;
    out[p * 4] = out[p * 4 + 1] = out[p * 4 + 2] = level;
    out[p * 4 + 3] = 255;
  }
}
