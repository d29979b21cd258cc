import { describe, expect, it } from 'vitest';
import type { WriteEvent } from './types.js';
import { WriteEvents } from './write-events.js';

const event = { interaction: 'create', version: { resourceType: 'Patient', id: 'p1' } } as WriteEvent;

describe('WriteEvents', () => {
  it('tells every subscriber until it unsubscribes', () => {
    const writes = new WriteEvents();
    const heard: string[] = [];
    const stop = writes.subscribe((events) => heard.push(`a:${events.length}`));
    writes.subscribe((events) => heard.push(`b:${events.length}`));
    writes.notify([event]);
    stop();
    writes.notify([event, event]);
    expect(heard).toEqual(['a:1', 'b:1', 'b:2']);
  });

  it("never lets a subscriber's failure reach the write or the other subscribers", () => {
    const writes = new WriteEvents();
    const heard: WriteEvent[][] = [];
    writes.subscribe(() => {
      throw new Error('broken listener');
    });
    writes.subscribe((events) => heard.push(events));
    expect(() => writes.notify([event])).not.toThrow();
    expect(heard).toEqual([[event]]);
  });
});
