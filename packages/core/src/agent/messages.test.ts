import { describe, expect, it } from 'vitest';
import { parseAgentMessage } from './messages.js';

describe('parseAgentMessage', () => {
  it('reads each message type', () => {
    expect(parseAgentMessage('{"type":"agent:connect:request","accessToken":"t","agentId":"a"}')).toEqual({
      type: 'agent:connect:request',
      accessToken: 't',
      agentId: 'a',
    });
    const transmit = parseAgentMessage(
      '{"type":"agent:transmit:response","remote":"h:1","contentType":"text/plain","body":"x","statusCode":200,"callback":"c"}',
    );
    expect(transmit.type === 'agent:transmit:response' && transmit.statusCode).toBe(200);
  });

  it('says what is wrong with a frame', () => {
    expect(() => parseAgentMessage('nope')).toThrow('not JSON');
    expect(() => parseAgentMessage('[]')).toThrow('JSON object');
    expect(() => parseAgentMessage('{"type":"agent:nope"}')).toThrow('Unknown agent message type "agent:nope"');
    expect(() => parseAgentMessage('{"type":"agent:connect:request","agentId":"a"}')).toThrow("needs 'accessToken'");
    expect(() => parseAgentMessage('{"type":"agent:error","body":1}')).toThrow("'body' must be a string");
    expect(() =>
      parseAgentMessage('{"type":"agent:transmit:response","remote":"r","contentType":"c","body":"","statusCode":"2"}'),
    ).toThrow('statusCode');
  });
});
