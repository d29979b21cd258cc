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
