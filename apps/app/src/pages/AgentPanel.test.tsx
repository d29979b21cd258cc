// @vitest-environment jsdom
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import type { Agent } from '@hearth/core';
import { MemoryRouter } from 'react-router';
import { describe, expect, it } from 'vitest';
import { mockClient, renderWithHearth, Reply } from '../../../../packages/react/src/test/render.js';
import { AgentPanel } from './AgentPanel.js';

const AGENT: Agent = {
  resourceType: 'Agent',
  id: 'a1',
  name: 'Lab agent',
  status: 'active',
  channel: [
    { name: 'adt', endpoint: { reference: 'Endpoint/e1' }, targetReference: { reference: 'Bot/b1' } },
    { name: 'lab', endpoint: { reference: 'Endpoint/e2' }, targetReference: { reference: 'Bot/b1' } },
  ],
} as Agent;

const ADT = 'MSH|^~\\&|LAB|NORTH|HEARTH|CLOUD|20240101||ADT^A01|M1|P|2.5.1\rPID|1||123||DOE^JOHN';
const ACK = 'MSH|^~\\&|HEARTH|CLOUD|LAB|NORTH|20240101||ACK^A01|X1|P|2.5.1\rMSA|AA|M1|stored';

function message(
  id: string,
  channel: string,
  direction: string,
  body: string,
  response: string | undefined,
  statusCode: number,
) {
  return {
    name: 'message',
    part: [
      { name: 'id', valueString: id },
      { name: 'channel', valueString: channel },
      { name: 'direction', valueCode: direction },
      { name: 'time', valueInstant: '2026-11-28T10:00:00.000Z' },
      { name: 'remote', valueString: direction === 'in' ? '10.0.0.9:5123' : 'mllp://10.0.0.5:2575' },
      { name: 'contentType', valueString: 'x-application/hl7-v2+er7' },
      { name: 'body', valueString: body },
      ...(response ? [{ name: 'response', valueString: response }] : []),
      { name: 'statusCode', valueInteger: statusCode },
    ],
  };
}

const STATUS = {
  resourceType: 'Parameters',
  parameter: [
    { name: 'status', valueCode: 'connected' },
    { name: 'version', valueString: '0.1.0' },
    { name: 'lastUpdated', valueInstant: '2026-11-28T10:00:05.000Z' },
  ],
};

const MESSAGES = {
  resourceType: 'Parameters',
  parameter: [
    message('2', 'adt', 'out', 'MSH|^~\\&|HEARTH|CLOUD|X|Y|20240101||ADT^A08|P1|P|2.5.1', 'connect ECONNREFUSED', 502),
    message('1', 'adt', 'in', ADT, ACK, 200),
  ],
};

function setup(routes: Parameters<typeof mockClient>[0]) {
  const { client, requests } = mockClient({
    'GET /fhir/R4/Endpoint/e1': () => ({ resourceType: 'Endpoint', id: 'e1', address: 'mllp://0.0.0.0:2575' }),
    'GET /fhir/R4/Endpoint/e2': () => ({ resourceType: 'Endpoint', id: 'e2', address: 'mllp://0.0.0.0:2576' }),
    'GET /fhir/R4/Bot/b1': () => ({ resourceType: 'Bot', id: 'b1', name: 'ADT intake' }),
    ...routes,
  });
  renderWithHearth(
    <MemoryRouter>
      <AgentPanel agent={AGENT} />
    </MemoryRouter>,
    client,
  );
  return { requests, user: userEvent.setup({ delay: null }) };
}

describe('AgentPanel', () => {
  it('shows the status as a badge, the channels with their addresses and bots, and the messages per channel', async () => {
    let log = MESSAGES;
    const { requests, user } = setup({
      'GET /fhir/R4/Agent/a1/$status': () => STATUS,
      'GET /fhir/R4/Agent/a1/$messages': () => log,
    });
    expect(await screen.findByText('Connected')).toBeTruthy();
    expect(screen.getByText('0.1.0')).toBeTruthy();
    expect(screen.getByText('Last heartbeat')).toBeTruthy();

    const channels = screen.getByRole('table', { name: 'Agent channels' });
    const adtRow = within(channels).getAllByRole('row')[1];
    expect(await within(adtRow).findByText('mllp://0.0.0.0:2575')).toBeTruthy();
    expect((await within(adtRow).findByRole('link', { name: 'ADT intake' })).getAttribute('href')).toBe('/Bot/b1');

    const adt = await screen.findByRole('table', { name: 'Messages on adt' });
    const [, pushed, received] = within(adt).getAllByRole('row');
    expect(within(pushed).getByText('out')).toBeTruthy();
    expect(within(pushed).getByText('502 failed')).toBeTruthy();
    expect(within(pushed).getByText('connect ECONNREFUSED')).toBeTruthy();
    expect(within(received).getByText('200 ok')).toBeTruthy();
    expect(received.textContent).toContain('MSH|^~\\&|LAB|NORTH');
    // The lab channel is listed with nothing yet.
    expect(screen.getByRole('heading', { name: 'Messages on lab' })).toBeTruthy();
    expect(screen.getByText('No messages yet.')).toBeTruthy();

    // A row opens to the whole message, a segment a line, and the whole answer.
    const show = within(received).getByRole('button', { name: 'Show' });
    expect(show.getAttribute('aria-expanded')).toBe('false');
    await user.click(show);
    expect(show.getAttribute('aria-expanded')).toBe('true');
    const details = document.getElementById(show.getAttribute('aria-controls') ?? '') as HTMLElement;
    expect(details.textContent).toContain('PID|1||123||DOE^JOHN');
    expect(details.textContent).toContain('MSA|AA|M1|stored');
    expect(details.querySelector('pre')?.textContent).toContain('2.5.1\nPID');
    // A newer message arrives: the open row stays open on the same message.
    log = {
      ...MESSAGES,
      parameter: [message('3', 'adt', 'in', ADT.replace('|M1|', '|M2|'), ACK, 200), ...MESSAGES.parameter],
    };
    await user.click(screen.getByRole('button', { name: 'Refresh' }));
    await waitFor(() => expect(within(adt).getAllByRole('row')).toHaveLength(5));
    expect(within(adt).getAllByRole('button', { name: 'Hide' })).toHaveLength(1);
    expect(document.getElementById(show.getAttribute('aria-controls') ?? '')?.textContent).toContain('MSA|AA|M1');

    // One channel at a time: asked of the server with channel=.
    await user.click(screen.getByRole('textbox', { name: 'Show channel' }));
    await user.click(await screen.findByRole('option', { name: 'lab' }));
    await waitFor(() =>
      expect(
        requests.some((r) => r.url.pathname.endsWith('$messages') && r.url.searchParams.get('channel') === 'lab'),
      ).toBe(true),
    );
    await waitFor(() => expect(screen.queryByRole('heading', { name: 'Messages on adt' })).toBeNull());
  });

  it('shows a disconnected agent, and a refused $messages as an OperationOutcome', async () => {
    setup({
      'GET /fhir/R4/Agent/a1/$status': () => ({
        resourceType: 'Parameters',
        parameter: [{ name: 'status', valueCode: 'disconnected' }],
      }),
      'GET /fhir/R4/Agent/a1/$messages': () =>
        new Reply(403, {
          resourceType: 'OperationOutcome',
          issue: [{ severity: 'error', code: 'forbidden', details: { text: 'Forbidden: $messages on Agent' } }],
        }),
    });
    expect(await screen.findByText('Disconnected')).toBeTruthy();
    expect(screen.getByText('never')).toBeTruthy();
    expect(await screen.findByText('Forbidden: $messages on Agent')).toBeTruthy();
  });

  it('reloads the configuration and says so, or shows why it could not', async () => {
    let answer: unknown = {
      resourceType: 'OperationOutcome',
      issue: [{ severity: 'information', code: 'informational' }],
    };
    const { requests, user } = setup({
      'GET /fhir/R4/Agent/a1/$status': () => STATUS,
      'GET /fhir/R4/Agent/a1/$messages': () => ({ resourceType: 'Parameters' }),
      'POST /fhir/R4/Agent/a1/$reload-config': () => answer,
    });
    await user.click(await screen.findByRole('button', { name: 'Reload configuration' }));
    expect((await screen.findByRole('status')).textContent).toContain('The agent reloaded its configuration.');
    expect(requests.some((r) => r.method === 'POST' && r.url.pathname.endsWith('$reload-config'))).toBe(true);

    answer = new Reply(400, {
      resourceType: 'OperationOutcome',
      issue: [{ severity: 'error', code: 'invalid', details: { text: 'Agent/a1 is not connected' } }],
    });
    await user.click(screen.getByRole('button', { name: 'Reload configuration' }));
    expect(await screen.findByText('Agent/a1 is not connected')).toBeTruthy();
  });

  it("pushes a message through the agent and shows the remote's answer, or the error", async () => {
    let answer: unknown = 'MSH|^~\\&|X|Y|HEARTH|CLOUD|20240101||ACK|P1|P|2.5.1\rMSA|AA|P1';
    const { requests, user } = setup({
      'GET /fhir/R4/Agent/a1/$status': () => STATUS,
      'GET /fhir/R4/Agent/a1/$messages': () => ({ resourceType: 'Parameters' }),
      'POST /fhir/R4/Agent/a1/$push': () => answer,
    });
    const form = await screen.findByRole('form', { name: 'Push a message through the agent' });
    await user.type(within(form).getByRole('textbox', { name: /Destination/ }), 'mllp://10.0.0.5:2575');
    await user.type(within(form).getByRole('textbox', { name: /Body/ }), 'MSH|^~\\&|HEARTH{Enter}PID|1');
    await user.click(within(form).getByRole('button', { name: 'Push' }));
    expect((await screen.findByLabelText('Remote answer')).textContent).toBe(
      'MSH|^~\\&|X|Y|HEARTH|CLOUD|20240101||ACK|P1|P|2.5.1\nMSA|AA|P1',
    );
    const push = requests.find((r) => r.method === 'POST');
    expect(push?.body).toEqual({
      resourceType: 'Parameters',
      parameter: [
        { name: 'destination', valueString: 'mllp://10.0.0.5:2575' },
        { name: 'body', valueString: 'MSH|^~\\&|HEARTH\rPID|1' },
        { name: 'contentType', valueString: 'x-application/hl7-v2+er7' },
        { name: 'waitForResponse', valueBoolean: true },
      ],
    });

    answer = new Reply(502, {
      resourceType: 'OperationOutcome',
      issue: [{ severity: 'error', code: 'transient', diagnostics: 'could not deliver: connect ECONNREFUSED' }],
    });
    await user.click(within(form).getByRole('button', { name: 'Push' }));
    expect(await screen.findByText(/connect ECONNREFUSED/)).toBeTruthy();
    expect(screen.queryByLabelText('Remote answer')).toBeNull();
  });
});
