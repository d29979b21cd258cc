// @vitest-environment jsdom
import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { testDicom, type TestImage } from '../test/dicom.js';
import { mockClient, Reply, renderWithHearth } from '../test/render.js';
import { DicomViewer } from './DicomViewer.js';

/** What the canvas was given: the RGBA of each putImageData, in order (jsdom has no canvas). */
const drawn: number[][] = [];

beforeAll(() => {
  // jsdom has no PointerEvent: one with a mouse event's coordinates.
  window.PointerEvent ??= class extends MouseEvent {
    readonly pointerId: number;
    constructor(type: string, init?: PointerEventInit) {
      super(type, init);
      this.pointerId = init?.pointerId ?? 0;
    }
  } as typeof PointerEvent;
  vi.spyOn(HTMLCanvasElement.prototype, 'getContext').mockImplementation(
    () =>
      ({
        createImageData: (w: number, h: number) => ({ width: w, height: h, data: new Uint8ClampedArray(w * h * 4) }),
        putImageData: (data: { data: Uint8ClampedArray }) => drawn.push(Array.from(data.data)),
      }) as never,
  );
  URL.createObjectURL = vi.fn(() => 'blob:test/dicom');
  URL.revokeObjectURL = vi.fn();
});
afterAll(() => vi.restoreAllMocks());
beforeEach(() => {
  drawn.length = 0;
});

function serve(image: TestImage | Uint8Array) {
  const bytes = ArrayBuffer.isView(image) ? image : testDicom(image);
  return mockClient({
    'GET /fhir/R4/Binary/b1': () =>
      new Response(bytes as BlobPart, { status: 200, headers: { 'content-type': 'application/dicom' } }),
  });
}

/** The red channel of the last drawing. */
const lastGrey = () => drawn[drawn.length - 1].filter((_, i) => i % 4 === 0);

describe('DicomViewer', () => {
  it('draws a 16-bit image through the window in the file, with its main attributes', async () => {
    const { client, requests } = serve({
      bitsAllocated: 16,
      pixels: [0, 100, 200, 300],
      windowCenter: '100',
      windowWidth: '101',
      modality: 'CT',
    });
    renderWithHearth(<DicomViewer binary="Binary/b1" />, client);
    expect(await screen.findByRole('img', { name: 'DICOM image: CT, 2 × 2' })).toBeTruthy();
    await waitFor(() => expect(lastGrey()).toEqual([0, 129, 255, 255]));
    const table = screen.getByRole('table', { name: 'DICOM attributes' });
    const row = (name: string) => within(table).getByRole('rowheader', { name }).nextElementSibling?.textContent;
    expect(row('Patient')).toBe('Jane Doe (MRN-1)');
    expect(row('Study')).toBe('Test study · 2026-11-28');
    expect(row('Series')).toBe('Series 3 · Test series');
    expect(row('Modality')).toBe('CT');
    expect(row('Dimensions')).toBe('2 × 2');
    expect(row('Transfer syntax')).toBe('Explicit VR Little Endian (1.2.840.10008.1.2.1)');
    expect(screen.getByText(/Window 100 \/ 101/)).toBeTruthy();
    // Fetched with the session's client (its token), as the raw file.
    expect(requests.map((r) => r.url.pathname)).toEqual(['/fhir/R4/Binary/b1']);
  });

  it('changes the rendering with the window sliders, and resets it', async () => {
    const { client } = serve({
      bitsAllocated: 16,
      pixels: [0, 100, 200, 300],
      windowCenter: '100',
      windowWidth: '101',
    });
    renderWithHearth(<DicomViewer binary="Binary/b1" />, client);
    const center = await screen.findByRole('slider', { name: 'Window center' });
    await waitFor(() => expect(lastGrey()).toEqual([0, 129, 255, 255]));
    // The center up to the top: everything darker.
    fireEvent.keyDown(center, { key: 'End' });
    await waitFor(() => expect(lastGrey()).toEqual([0, 0, 0, 0]));
    fireEvent.click(screen.getByRole('button', { name: 'Reset window' }));
    await waitFor(() => expect(lastGrey()).toEqual([0, 129, 255, 255]));
    // The width at its widest: the levels spread out.
    fireEvent.keyDown(screen.getByRole('slider', { name: 'Window width' }), { key: 'End' });
    await waitFor(() => expect(lastGrey()).toEqual([85, 128, 170, 213]));
  });

  it('adjusts the window by dragging on the image', async () => {
    const { client } = serve({
      bitsAllocated: 16,
      pixels: [0, 100, 200, 300],
      windowCenter: '100',
      windowWidth: '101',
    });
    renderWithHearth(<DicomViewer binary="Binary/b1" />, client);
    const canvas = await screen.findByRole('img');
    canvas.getBoundingClientRect = () => ({ width: 200, height: 200 }) as DOMRect;
    fireEvent.pointerDown(canvas, { clientX: 100, clientY: 100, pointerId: 1 });
    // Downwards: the center falls, the image brightens.
    fireEvent.pointerMove(canvas, { clientX: 100, clientY: 150, pointerId: 1 });
    fireEvent.pointerUp(canvas, { pointerId: 1 });
    await waitFor(() => expect(Number(canvas.dataset.windowCenter)).toBeLessThan(100));
    expect(lastGrey()[0]).toBeGreaterThan(0);
    expect(Number(canvas.dataset.windowWidth)).toBe(101);
  });

  it('shows each frame of a multi-frame file with a frame slider', async () => {
    const { client } = serve({
      frames: 3,
      pixels: [0, 0, 0, 0, 0, 0, 0, 255, 255, 255, 255, 255],
      windowCenter: '128',
      windowWidth: '256',
    });
    renderWithHearth(<DicomViewer binary="Binary/b1" />, client);
    const slider = await screen.findByRole('slider', { name: 'Frame' });
    expect(screen.getByRole('img', { name: 'DICOM image: OT, 2 × 2, frame 1 of 3' })).toBeTruthy();
    await waitFor(() => expect(lastGrey()).toEqual([0, 0, 0, 0]));
    fireEvent.keyDown(slider, { key: 'End' });
    await waitFor(() => expect(lastGrey()).toEqual([255, 255, 255, 255]));
    expect(screen.getByRole('img', { name: 'DICOM image: OT, 2 × 2, frame 3 of 3' })).toBeTruthy();
  });

  it('draws RGB images without window controls', async () => {
    const { client } = serve({ rows: 1, columns: 2, samplesPerPixel: 3, pixels: [255, 0, 0, 0, 0, 255] });
    renderWithHearth(<DicomViewer binary="Binary/b1" />, client);
    await screen.findByRole('img');
    await waitFor(() => expect(drawn.at(-1)).toEqual([255, 0, 0, 255, 0, 0, 255, 255]));
    expect(screen.queryByRole('slider')).toBeNull();
  });

  it('names a transfer syntax it does not decode and offers the download, never a blank canvas', async () => {
    const { client } = serve({
      transferSyntax: '1.2.840.10008.1.2.4.90',
      pixelBytes: Uint8Array.from([0xff, 0x4f, 0xff, 0x51]),
    });
    renderWithHearth(<DicomViewer binary="Binary/b1" fileName="ct.dcm" />, client);
    const alert = await screen.findByRole('alert');
    expect(alert.textContent).toContain(
      'Its pixel data is encoded as JPEG 2000 Image Compression (Lossless Only) (1.2.840.10008.1.2.4.90), which this viewer does not decode.',
    );
    const link = within(alert).getByRole('link', { name: 'Download DICOM file' });
    await waitFor(() => expect(link.getAttribute('href')).toBe('blob:test/dicom'));
    expect(link.getAttribute('download')).toBe('ct.dcm');
    expect(screen.queryByRole('img')).toBeNull();
    // The attributes are still there.
    expect(screen.getByRole('table', { name: 'DICOM attributes' }).textContent).toContain('Jane Doe');
  });

  it('says a file is not DICOM, and a Binary it cannot read, with the outcome', async () => {
    const { client } = serve(new TextEncoder().encode('just some text'));
    renderWithHearth(<DicomViewer binary="Binary/b1" />, client);
    expect(await screen.findByText('This file cannot be shown')).toBeTruthy();
    expect(screen.getByText(/Not a readable DICOM file/)).toBeTruthy();
    expect(screen.getByRole('link', { name: 'Download DICOM file' })).toBeTruthy();

    const missing = mockClient({
      'GET /fhir/R4/Binary/gone': () =>
        new Reply(404, {
          resourceType: 'OperationOutcome',
          issue: [{ severity: 'error', code: 'not-found', diagnostics: 'Binary/gone not found' }],
        }),
    });
    renderWithHearth(<DicomViewer binary="Binary/gone" />, missing.client);
    expect(await screen.findByText(/Binary\/gone not found/)).toBeTruthy();
  });
});
