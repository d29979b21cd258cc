import { describe, expect, it } from 'vitest';
import { testDicom } from '../test/dicom.js';
import { initialWindow, personName, readDicom, renderFrame, type DicomImage, type Window } from './dicom-image.js';

/** The grey levels (the red channel) of a rendered frame. */
function levels(image: DicomImage, window: Window, frame = 0): number[] {
  const out = new Uint8ClampedArray(image.rows * image.columns * 4);
  renderFrame(image, frame, window, out);
  return Array.from({ length: image.rows * image.columns }, (_, p) => out[p * 4]);
}

describe('readDicom', () => {
  it('reads the main attributes of an explicit VR little endian file', async () => {
    const image = await readDicom(testDicom({ modality: 'CT', patientName: 'Doe^Jane^Q' }));
    expect(image.unsupported).toBeUndefined();
    expect(image).toMatchObject({ rows: 2, columns: 2, frames: 1, photometric: 'MONOCHROME2', bitsAllocated: 8 });
    expect(image.tags).toMatchObject({
      patientName: 'Jane Q Doe',
      patientId: 'MRN-1',
      modality: 'CT',
      studyDate: '2026-11-28',
      studyDescription: 'Test study',
      seriesDescription: 'Test series',
      seriesNumber: '3',
      instanceNumber: '7',
    });
  });

  it('decodes 16-bit signed pixels with rescale in implicit VR, explicit VR and big endian files alike', async () => {
    const options = {
      bitsAllocated: 16,
      bitsStored: 12,
      pixelRepresentation: 1,
      // 12-bit two's complement: 0xfff is -1, 0x800 is -2048.
      pixels: [0, 0xfff, 0x800, 0x7ff],
      rescaleSlope: '2',
      rescaleIntercept: '-10',
    };
    for (const transferSyntax of ['1.2.840.10008.1.2', '1.2.840.10008.1.2.1', '1.2.840.10008.1.2.2']) {
      const image = await readDicom(testDicom({ ...options, transferSyntax }));
      expect(image.unsupported, transferSyntax).toBeUndefined();
      expect(Array.from(image.grey![0]), transferSyntax).toEqual([-10, -12, -4106, 4084]);
      expect(image.range).toEqual({ min: -4106, max: 4084 });
    }
  });

  it("opens with the file's window, else one spanning the values, and windows by PS3.3 C.11.2.1.2", async () => {
    const withWindow = await readDicom(
      testDicom({ bitsAllocated: 16, pixels: [0, 100, 200, 300], windowCenter: '100\\50', windowWidth: '101\\10' }),
    );
    expect(initialWindow(withWindow)).toEqual({ center: 100, width: 101 });
    // Below center - width/2 black, above center + width/2 white, linear between.
    expect(levels(withWindow, initialWindow(withWindow))).toEqual([0, 129, 255, 255]);
    expect(levels(withWindow, { center: 230, width: 101 })).toEqual([0, 0, 52, 255]);

    const without = await readDicom(testDicom({ pixels: [10, 20, 30, 40] }));
    expect(initialWindow(without)).toEqual({ center: 25.5, width: 31 });
    expect(levels(without, initialWindow(without))).toEqual([0, 85, 170, 255]);
  });

  it('inverts MONOCHROME1 and shows RGB (pixel or plane interleaved) and YBR_FULL in colour', async () => {
    const mono1 = await readDicom(testDicom({ photometric: 'MONOCHROME1', pixels: [10, 20, 30, 40] }));
    expect(levels(mono1, initialWindow(mono1))).toEqual([255, 170, 85, 0]);

    const rgbOut = (image: DicomImage) => {
      const out = new Uint8ClampedArray(image.rows * image.columns * 4);
      renderFrame(image, 0, { center: 0, width: 1 }, out);
      return Array.from(out.slice(0, 8));
    };
    const byPixel = await readDicom(
      testDicom({ rows: 1, columns: 2, samplesPerPixel: 3, pixels: [255, 0, 0, 0, 0, 255] }),
    );
    expect(rgbOut(byPixel)).toEqual([255, 0, 0, 255, 0, 0, 255, 255]);
    const byPlane = await readDicom(
      testDicom({ rows: 1, columns: 2, samplesPerPixel: 3, planarConfiguration: 1, pixels: [255, 0, 0, 0, 0, 255] }),
    );
    expect(rgbOut(byPlane)).toEqual([255, 0, 0, 255, 0, 0, 255, 255]);
    // Y 76, Cb 85, Cr 255 is (close to) pure red.
    const ybr = await readDicom(
      testDicom({ rows: 1, columns: 1, samplesPerPixel: 3, photometric: 'YBR_FULL', pixels: [76, 85, 255] }),
    );
    const [r, g, b] = rgbOut(ybr);
    expect(r).toBeGreaterThan(250);
    expect(g).toBeLessThan(5);
    expect(b).toBeLessThan(5);
  });

  it('reads every frame of a multi-frame file', async () => {
    const image = await readDicom(testDicom({ frames: 3, pixels: [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2] }));
    expect(image.frames).toBe(3);
    expect(image.grey!.map((f) => f[0])).toEqual([0, 1, 2]);
  });

  it('names the transfer syntax it does not decode, and what else it cannot show', async () => {
    const jpeg = await readDicom(
      testDicom({ transferSyntax: '1.2.840.10008.1.2.4.50', pixelBytes: Uint8Array.from([0xff, 0xd8, 0xff, 0xd9]) }),
    );
    expect(jpeg.unsupported).toContain('JPEG Baseline (Process 1) (1.2.840.10008.1.2.4.50)');
    expect(jpeg.tags.patientName).toBe('Jane Doe');

    const short = await readDicom(testDicom({ rows: 4, columns: 4, pixels: [1, 2, 3, 4] }));
    expect(short.unsupported).toMatch(/holds 4 bytes, fewer than the 16/);

    const palette = await readDicom(testDicom({ photometric: 'PALETTE COLOR' }));
    expect(palette.unsupported).toMatch(/not PALETTE COLOR/);

    await expect(readDicom(new TextEncoder().encode('not a DICOM file at all'))).rejects.toThrow(
      /Not a readable DICOM file/,
    );
  });

  it('reads person names the way people write them', () => {
    expect(personName('Doe^Jane')).toBe('Jane Doe');
    expect(personName('Yamada^Tarou=山田^太郎')).toBe('Tarou Yamada');
    expect(personName('')).toBeUndefined();
  });
});
