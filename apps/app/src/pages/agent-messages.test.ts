import { describe, expect, it } from 'vitest';
import { byChannel, firstLine, outcomeOf, readableText, readMessages, readStatus } from './agent-messages.js';

describe('agent-messages', () => {
  it('reads $status, disconnected when it says nothing', () => {
    expect(
      readStatus({
        resourceType: 'Parameters',
        parameter: [
          { name: 'status', valueCode: 'connected' },
          { name: 'version', valueString: '1.2.3' },
          { name: 'lastUpdated', valueInstant: '2026-01-01T00:00:00Z' },
        ],
      }),
    ).toEqual({ status: 'connected', version: '1.2.3', lastUpdated: '2026-01-01T00:00:00Z' });
    expect(readStatus(undefined)).toEqual({ status: 'disconnected' });
  });

  it('reads $messages in order, and groups them under the channels, those of the Agent first', () => {
    const messages = readMessages({
      resourceType: 'Parameters',
      parameter: [
        {
          name: 'message',
          part: [
            { name: 'id', valueString: '2' },
            { name: 'channel', valueString: 'old' },
            { name: 'direction', valueCode: 'out' },
            { name: 'time', valueInstant: '2026-01-01T00:00:02Z' },
            { name: 'remote', valueString: 'mllp://h:1' },
            { name: 'contentType', valueString: 'text/plain' },
            { name: 'body', valueString: 'x' },
            { name: 'statusCode', valueInteger: 0 },
          ],
        },
        {
          name: 'message',
          part: [
            { name: 'id', valueString: '1' },
            { name: 'channel', valueString: 'adt' },
            { name: 'direction', valueCode: 'in' },
            { name: 'time', valueInstant: '2026-01-01T00:00:01Z' },
            { name: 'remote', valueString: '1.2.3.4:5' },
            { name: 'contentType', valueString: 'text/plain' },
            { name: 'body', valueString: 'y' },
            { name: 'response', valueString: 'ok' },
            { name: 'statusCode', valueInteger: 200 },
          ],
        },
      ],
    });
    expect(messages).toEqual([
      {
        id: '2',
        channel: 'old',
        direction: 'out',
        time: '2026-01-01T00:00:02Z',
        remote: 'mllp://h:1',
        contentType: 'text/plain',
        body: 'x',
        statusCode: 0,
      },
      {
        id: '1',
        channel: 'adt',
        direction: 'in',
        time: '2026-01-01T00:00:01Z',
        remote: '1.2.3.4:5',
        contentType: 'text/plain',
        body: 'y',
        response: 'ok',
        statusCode: 200,
      },
    ]);
    expect(byChannel(['adt', 'lab'], messages).map(([name, list]) => [name, list.length])).toEqual([
      ['adt', 1],
      ['lab', 0],
      ['old', 1],
    ]);
    expect(readMessages({ resourceType: 'Parameters' })).toEqual([]);
  });

  it('shows HL7 segments a line each, a first line cut short, and outcomes by status', () => {
    expect(readableText('MSH|a\rPID|b\r')).toBe('MSH|a\nPID|b');
    expect(firstLine('MSH|a\rPID|b')).toBe('MSH|a');
    expect(firstLine('x'.repeat(100), 10)).toBe(`${'x'.repeat(9)}…`);
    expect(outcomeOf(200)).toEqual({ label: '200 ok', color: 'green' });
    expect(outcomeOf(502)).toEqual({ label: '502 failed', color: 'red' });
    expect(outcomeOf(0)).toEqual({ label: 'no answer', color: 'gray' });
  });
});
