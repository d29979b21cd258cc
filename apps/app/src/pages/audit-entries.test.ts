import { describe, expect, it } from 'vitest';
import { activityBuckets, outcomeLabel, whatLabel, type TrailEvent } from './audit-entries.js';

const event = (recorded: string, outcome = '0'): TrailEvent => ({ resourceType: 'AuditEvent', recorded, outcome });

describe('audit entries', () => {
  it('counts entries per hour over a short span, per day over a long one, failures apart', () => {
    expect(
      activityBuckets([
        event('2026-11-28T04:10:00Z'),
        event('2026-11-28T04:50:00Z', '4'),
        event('2026-11-28T06:00:00Z'),
      ]),
    ).toEqual([
      { time: '2026-11-28 04:00', count: 2, failures: 1 },
      { time: '2026-11-28 06:00', count: 1, failures: 0 },
    ]);
    expect(activityBuckets([event('2026-11-01T10:00:00Z'), event('2026-11-20T10:00:00Z')]).map((b) => b.time)).toEqual([
      '2026-11-01',
      '2026-11-20',
    ]);
    expect(activityBuckets([])).toEqual([]);
  });

  it('labels outcomes and searches', () => {
    expect(outcomeLabel({ ...event('2026-11-28T00:00:00Z', '4'), outcomeDesc: '404' })).toBe('refused (404)');
    expect(
      whatLabel({
        ...event('2026-11-28T00:00:00Z'),
        entity: [{ what: { display: 'Observation' }, detail: [{ type: 'count', valueString: '3' }] }],
      }),
    ).toBe('Observation (3 found)');
  });
});
