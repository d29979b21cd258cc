import type { Task } from '@hearth/core';
import { describe, expect, it } from 'vitest';
import {
  cancelledTask,
  claimedTask,
  compareByDue,
  completedTask,
  dueBucket,
  matchesDue,
  startedTask,
  taskActions,
} from './worklist.js';

const now = new Date(2026, 2, 10, 12, 0, 0);
const at = (days: number, hours = 0) => new Date(now.getTime() + days * 86_400_000 + hours * 3_600_000).toISOString();
const task = (fields: Partial<Task> = {}): Task => ({
  resourceType: 'Task',
  id: 'x',
  meta: { versionId: '3' },
  status: 'requested',
  intent: 'order',
  ...fields,
});
const due = (end: string) => task({ restriction: { period: { end } } });
const me = { reference: 'Practitioner/me' };

describe('worklist', () => {
  it('buckets tasks by due date relative to now', () => {
    expect(dueBucket(due(at(0, -1)), now)).toBe('overdue');
    expect(dueBucket(due(at(0, 3)), now)).toBe('today');
    expect(dueBucket(due(at(3)), now)).toBe('week');
    expect(dueBucket(due(at(30)), now)).toBe('later');
    expect(dueBucket(task(), now)).toBe('none');
    // A date without a time is due at the end of that day.
    expect(dueBucket(due('2026-03-10'), now)).toBe('today');
    expect(matchesDue(due(at(0, -1)), 'today', now)).toBe(true);
    expect(matchesDue(due(at(3)), 'today', now)).toBe(false);
    expect(matchesDue(due(at(3)), 'week', now)).toBe(true);
    expect(matchesDue(task(), 'none', now)).toBe(true);
    expect(matchesDue(due(at(30)), 'any', now)).toBe(true);
  });

  it('sorts by due date, undated last, then by when authored', () => {
    const list = [
      task({ id: 'u2', authoredOn: '2026-03-02' }),
      due(at(5)),
      task({ id: 'u1', authoredOn: '2026-03-01' }),
      due(at(-1)),
    ];
    list[1].id = 'd5';
    list[3].id = 'd-1';
    expect(list.sort(compareByDue).map((t) => t.id)).toEqual(['d-1', 'd5', 'u1', 'u2']);
  });

  it('offers claim to others, start and complete to the owner, cancel while open', () => {
    expect(taskActions(task(), me)).toEqual({ claim: true, start: false, complete: false, cancel: true });
    expect(taskActions(task({ owner: me, status: 'accepted' }), me)).toEqual({
      claim: false,
      start: true,
      complete: true,
      cancel: true,
    });
    expect(taskActions(task({ owner: me, status: 'in-progress' }), me).start).toBe(false);
    expect(taskActions(task({ owner: me, status: 'completed' }), me)).toEqual({
      claim: false,
      start: false,
      complete: false,
      cancel: false,
    });
  });

  it('writes each transition without the read meta', () => {
    const claimed = claimedTask(task(), me, now);
    expect(claimed).toMatchObject({ owner: me, status: 'accepted', lastModified: now.toISOString() });
    expect(claimed.meta).toBeUndefined();
    expect(claimedTask(task({ status: 'in-progress' }), me, now).status).toBe('in-progress');
    expect(startedTask(task(), now).executionPeriod).toEqual({ start: now.toISOString() });
    const started = task({ executionPeriod: { start: '2026-03-01T00:00:00Z' } });
    expect(completedTask(started, now).executionPeriod).toEqual({
      start: '2026-03-01T00:00:00Z',
      end: now.toISOString(),
    });
    expect(cancelledTask(task(), ' duplicate ', now)).toMatchObject({
      status: 'cancelled',
      statusReason: { text: 'duplicate' },
    });
    expect(() => cancelledTask(task(), '  ', now)).toThrow('Give a reason');
  });
});
