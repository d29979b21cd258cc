import { describe, expect, it } from 'vitest';
import { buildMessage, isUnreadBy, readReceipts, threadIdOf, withReadReceipt, READ_RECEIPT_URL } from './messaging.js';
import type { Communication } from './fhir-types.js';

const first: Communication = {
  ...buildMessage({
    subject: { reference: 'Patient/p1' },
    sender: { reference: 'Practitioner/d1' },
    recipients: [{ reference: 'Patient/p1' }, { reference: 'Practitioner/n1' }],
    topic: 'Results',
    text: '  Your results are in.  ',
    attachments: [{ contentType: 'application/pdf', url: 'Binary/b1', title: 'report.pdf' }],
    sent: '2026-04-01T08:00:00Z',
  }),
  id: 'c1',
};

describe('messages', () => {
  it('a new thread: topic, subject, sender, recipients, trimmed text and attachments, no partOf', () => {
    expect(first).toMatchObject({
      resourceType: 'Communication',
      status: 'completed',
      topic: { text: 'Results' },
      subject: { reference: 'Patient/p1' },
      sent: '2026-04-01T08:00:00Z',
      payload: [
        { contentString: 'Your results are in.' },
        { contentAttachment: { url: 'Binary/b1', title: 'report.pdf' } },
      ],
    });
    expect(first.partOf).toBeUndefined();
    expect(threadIdOf(first)).toBe('c1');
  });

  it('a reply to a reply joins the first message’s thread and answers the one replied to', () => {
    const reply = { ...buildMessage({ ...base(), inResponseTo: first }), id: 'c2' };
    const second = buildMessage({ ...base(), inResponseTo: reply });
    expect(second.partOf).toEqual([{ reference: 'Communication/c1' }]);
    expect(second.inResponseTo).toEqual([{ reference: 'Communication/c2' }]);
    expect(threadIdOf(second)).toBe('c1');
    expect(buildMessage({ ...base(), text: '   ' }).payload).toEqual([]);
  });

  it('read receipts: one per reader, received once every recipient has read', () => {
    expect(isUnreadBy(first, 'Patient/p1')).toBe(true);
    expect(isUnreadBy(first, 'Practitioner/d1')).toBe(false);
    const once = withReadReceipt(first, 'Patient/p1', '2026-04-01T09:00:00Z');
    expect(once.received).toBeUndefined();
    expect(isUnreadBy(once, 'Patient/p1')).toBe(false);
    expect(isUnreadBy(once, 'Practitioner/n1')).toBe(true);
    expect(withReadReceipt(once, 'Patient/p1', '2026-04-02T00:00:00Z')).toBe(once);
    const both = withReadReceipt(once, 'Practitioner/n1', '2026-04-01T10:00:00Z');
    expect(both.received).toBe('2026-04-01T10:00:00Z');
    expect(readReceipts(both)).toEqual([
      { reader: 'Patient/p1', time: '2026-04-01T09:00:00Z' },
      { reader: 'Practitioner/n1', time: '2026-04-01T10:00:00Z' },
    ]);
    expect(both.extension?.every((e) => e.url === READ_RECEIPT_URL)).toBe(true);
  });
});

function base() {
  return {
    subject: { reference: 'Patient/p1' },
    sender: { reference: 'Patient/p1' },
    recipients: [{ reference: 'Practitioner/d1' }],
    topic: 'Results',
    text: 'Thanks',
  };
}
