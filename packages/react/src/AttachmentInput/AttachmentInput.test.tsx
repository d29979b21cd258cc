// @vitest-environment jsdom
import { screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { mockClient, renderWithHearth, Reply } from '../test/render.js';
import { AttachmentInput } from './AttachmentInput.js';

describe('AttachmentInput', () => {
  // Without XMLHttpRequest the SDK reports progress from the streamed body, through the mocked fetch.
  beforeAll(() => vi.stubGlobal('XMLHttpRequest', undefined));
  afterAll(() => vi.unstubAllGlobals());

  it('uploads the chosen file as a Binary and keeps an Attachment to it', async () => {
    const user = userEvent.setup({ delay: null });
    const { client, requests } = mockClient({
      'POST /fhir/R4/Binary': () => new Reply(201, { resourceType: 'Binary', id: 'b1', contentType: 'text/plain' }),
    });
    const onChange = vi.fn();
    const { container } = renderWithHearth(<AttachmentInput label="Report" onChange={onChange} />, client);
    const input = container.querySelector('input[type="file"]') as HTMLInputElement;
    await user.upload(input, new File(['hello world'], 'report.txt', { type: 'text/plain' }));
    await waitFor(() => expect(onChange).toHaveBeenCalled());
    expect(onChange.mock.calls[0][0]).toMatchObject({
      contentType: 'text/plain',
      url: 'Binary/b1',
      title: 'report.txt',
      size: 11,
    });
    expect(requests[0].method).toBe('POST');
  });

  it('shows the upload progress while the bytes are sent', async () => {
    const user = userEvent.setup({ delay: null });
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    const { client } = mockClient({
      'POST /fhir/R4/Binary': async (req) => {
        // Read the first 64 KiB chunk of four, then wait: the bar shows part of the file sent
        // (the stream reads one chunk ahead of its reader).
        const reader = (req.body as ReadableStream<Uint8Array>).getReader();
        await reader.read();
        await held;
        while (!(await reader.read()).done) {
          // the rest of the bytes
        }
        return new Reply(201, { resourceType: 'Binary', id: 'b2', contentType: 'application/octet-stream' });
      },
    });
    const onChange = vi.fn();
    const { container } = renderWithHearth(<AttachmentInput label="Scan" onChange={onChange} />, client);
    const input = container.querySelector('input[type="file"]') as HTMLInputElement;
    await user.upload(input, new File([new Uint8Array(256 * 1024)], 'scan.bin'));
    const bar = await screen.findByRole('progressbar', { name: 'Upload progress' });
    await waitFor(() => expect(Number(bar.getAttribute('aria-valuenow'))).toBeGreaterThan(0));
    expect(Number(bar.getAttribute('aria-valuenow'))).toBeLessThan(100);
    release();
    await waitFor(() => expect(onChange).toHaveBeenCalled());
    expect(screen.queryByRole('progressbar')).toBeNull();
    expect(onChange.mock.calls[0][0]).toMatchObject({ url: 'Binary/b2', title: 'scan.bin', size: 256 * 1024 });
  });

  it('shows why an upload failed', async () => {
    const user = userEvent.setup({ delay: null });
    const { client } = mockClient({
      'POST /fhir/R4/Binary': () =>
        new Reply(413, {
          resourceType: 'OperationOutcome',
          issue: [{ severity: 'error', code: 'too-costly', details: { text: 'File too large' } }],
        }),
    });
    const { container } = renderWithHearth(<AttachmentInput onChange={() => undefined} />, client);
    await user.upload(container.querySelector('input[type="file"]') as HTMLInputElement, new File(['x'], 'x.bin'));
    expect((await screen.findByRole('alert')).textContent).toContain('File too large');
  });
});
