/**
 * A bot's return value as the body of a transmit response: text as is (an HL7 v2 bot's
 * Hl7Message arrives already serialised by the sandbox), in the content type of the message it
 * answers when that is text; anything else as JSON; nothing as an empty body.
 */
export function botAnswer(value: unknown, requestContentType: string): { contentType: string; body: string } {
  if (value === undefined || value === null) {
    return { contentType: requestContentType, body: '' };
  }
  if (typeof value === 'string') {
    const textual = /^(text\/|x-application\/)/i.test(requestContentType);
    return { contentType: textual ? requestContentType : 'text/plain', body: value };
  }
  return { contentType: 'application/json', body: JSON.stringify(value) };
}
