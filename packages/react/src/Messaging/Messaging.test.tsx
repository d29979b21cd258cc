// @vitest-environment jsdom
import type { Communication } from '@hearth/core';
import { screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it, vi } from 'vitest';
import { bundle, mockClient, renderWithHearth } from '../test/render.js';
import { loadThreads } from './messages.js';
import { MessageThread } from './MessageThread.js';
import { ThreadList } from './ThreadList.js';

const me = 'Patient/p1';
const first: Communication = {
  resourceType: 'Communication',
  id: 'c1',
  status: 'completed',
  topic: { text: 'Lab results' },
  subject: { reference: me },
  sender: { reference: 'Practitioner/d1' },
  recipient: [{ reference: me }],
  sent: '2026-04-01T08:00:00Z',
  payload: [
    { contentString: 'Your results are in.' },
    { contentAttachment: { url: 'Binary/b1', title: 'report.pdf', contentType: 'application/pdf' } },
  ],
};
const mine: Communication = {
  resourceType: 'Communication',
  id: 'c2',
  status: 'completed',
  topic: { text: 'Lab results' },
  subject: { reference: me },
  sender: { reference: me },
  recipient: [{ reference: 'Practitioner/d1' }],
  partOf: [{ reference: 'Communication/c1' }],
  sent: '2026-04-01T09:00:00Z',
  payload: [{ contentString: 'Thanks!' }],
  extension: [
    {
      url: 'https://hearth.dev/fhir/StructureDefinition/read-receipt',
      extension: [
        { url: 'reader', valueReference: { reference: 'Practitioner/d1' } },
        { url: 'time', valueDateTime: '2026-04-01T09:30:00Z' },
      ],
    },
  ],
};

describe('messaging components', () => {
  it('groups my messages into threads with my unread counts, and opens one', async () => {
    const { client, requests } = mockClient({ 'GET /fhir/R4/Communication': () => bundle([mine, first]) });
    const threads = await loadThreads(client, me);
    expect(requests[0].url.searchParams.get('_filter')).toBe(`sender eq ${me} or recipient eq ${me}`);
    expect(threads).toEqual([{ id: 'c1', topic: 'Lab results', subject: { reference: me }, last: mine, unread: 1 }]);
    const onOpen = vi.fn();
    renderWithHearth(<ThreadList threads={threads} onOpen={onOpen} />, client);
    await userEvent.click(screen.getByRole('button', { name: /^Lab results 1 unread/ }));
    expect(onOpen).toHaveBeenCalledWith('c1');
  });

  it('shows a thread, marks it read, and sends a reply to the other participants', async () => {
    const user = userEvent.setup({ delay: null });
    let created: Communication | undefined;
    const { client, requests } = mockClient({
      'GET /fhir/R4/Communication/c1': () => first,
      'GET /fhir/R4/Communication': () => bundle([mine]),
      'GET /fhir/R4/Practitioner/d1': () => ({ resourceType: 'Practitioner', id: 'd1', name: [{ family: 'House' }] }),
      'GET /fhir/R4/Patient/p1': () => ({ resourceType: 'Patient', id: 'p1', name: [{ family: 'Lovelace' }] }),
      'POST /fhir/R4/Communication/c1/$mark-read': () => ({
        resourceType: 'Parameters',
        parameter: [{ name: 'marked', valueInteger: 1 }],
      }),
      'POST /fhir/R4/Communication': (req) => {
        created = { ...(req.body as Communication), id: 'c3' };
        return created;
      },
    });
    const changed = vi.fn();
    window.addEventListener('hearth:messages-changed', changed);
    renderWithHearth(<MessageThread threadId="c1" me={me} />, client);
    await screen.findByText('Your results are in.');
    expect(screen.getByRole('heading', { name: 'Lab results' })).toBeTruthy();
    expect(screen.getByRole('button', { name: 'Attachment: report.pdf' })).toBeTruthy();
    // My message, read by its one recipient.
    expect(screen.getByLabelText('Sent message').textContent).toContain('Read');
    await waitFor(() => expect(requests.some((r) => r.url.pathname.endsWith('/$mark-read'))).toBe(true));
    expect(requests.find((r) => r.url.pathname === '/fhir/R4/Communication')?.url.searchParams.get('part-of')).toBe(
      'Communication/c1',
    );

    await user.type(screen.getByRole('textbox', { name: 'Reply' }), 'See you Monday');
    await user.click(screen.getByRole('button', { name: 'Send' }));
    await screen.findByText('See you Monday');
    expect(created).toMatchObject({
      status: 'completed',
      sender: { reference: me },
      recipient: [{ reference: 'Practitioner/d1' }],
      subject: { reference: me },
      topic: { text: 'Lab results' },
      partOf: [{ reference: 'Communication/c1' }],
      inResponseTo: [{ reference: 'Communication/c2' }],
      payload: [{ contentString: 'See you Monday' }],
    });
    expect((screen.getByRole('textbox', { name: 'Reply' }) as HTMLTextAreaElement).value).toBe('');
    expect(changed).toHaveBeenCalled();
    window.removeEventListener('hearth:messages-changed', changed);
  });
});
