// @vitest-environment jsdom
import type { Reference } from '@hearth/core';
import { screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { useState } from 'react';
import { describe, expect, it, vi } from 'vitest';
import { bundle, mockClient, renderWithHearth } from '../test/render.js';
import { ReferenceInput, textSearchParam } from './ReferenceInput.js';

function Controlled(props: { targetTypes?: string[]; report: (v: Reference | undefined) => void; start?: Reference }) {
  const [value, setValue] = useState<Reference | undefined>(props.start);
  return (
    <ReferenceInput
      label="Performer"
      targetTypes={props.targetTypes}
      value={value}
      onChange={(v) => {
        setValue(v);
        props.report(v);
      }}
    />
  );
}

describe('ReferenceInput', () => {
  it('searches the chosen target type by its text parameter', async () => {
    const user = userEvent.setup({ delay: null });
    const { client, requests } = mockClient({
      'GET /fhir/R4/Practitioner': (req) =>
        bundle(
          req.url.searchParams.get('name') === 'hou'
            ? [{ resourceType: 'Practitioner', id: 'd1', name: [{ given: ['Gregory'], family: 'House' }] }]
            : [],
        ),
      'GET /fhir/R4/Organization': () => bundle([{ resourceType: 'Organization', id: 'o1', name: 'Princeton' }]),
    });
    const report = vi.fn();
    renderWithHearth(<Controlled targetTypes={['Practitioner', 'Organization']} report={report} />, client);
    await user.type(screen.getByRole('textbox', { name: 'Performer' }), 'hou');
    await user.click(await screen.findByRole('option', { name: 'Gregory House' }));
    expect(report).toHaveBeenLastCalledWith({ reference: 'Practitioner/d1', display: 'Gregory House' });
    expect(
      requests.some((r) => r.url.pathname.endsWith('/Practitioner') && r.url.searchParams.get('name') === 'hou'),
    ).toBe(true);
    // Another allowed type: its own search.
    await user.click(screen.getByRole('textbox', { name: 'Performer type' }));
    await user.click(await screen.findByRole('option', { name: 'Organization' }));
    await user.clear(screen.getByRole('textbox', { name: 'Performer' }));
    await user.click(screen.getByRole('textbox', { name: 'Performer' }));
    await user.click(await screen.findByRole('option', { name: 'Princeton' }));
    expect(report).toHaveBeenLastCalledWith({ reference: 'Organization/o1', display: 'Princeton' });
  });

  it('shows the current reference by its display, and clears it', async () => {
    const user = userEvent.setup({ delay: null });
    const { client } = mockClient({ 'GET /fhir/R4/Practitioner': () => bundle([]) });
    const report = vi.fn();
    renderWithHearth(
      <Controlled
        targetTypes={['Practitioner']}
        start={{ reference: 'Practitioner/d9', display: 'Dr Who' }}
        report={report}
      />,
      client,
    );
    const input = screen.getByRole('textbox', { name: 'Performer' }) as HTMLInputElement;
    await waitFor(() => expect(input.value).toBe('Dr Who'));
    // One allowed type: no type picker.
    expect(screen.queryByRole('textbox', { name: 'Performer type' })).toBeNull();
    await user.click(screen.getByRole('button', { name: 'Clear Performer' }));
    expect(report).toHaveBeenLastCalledWith(undefined);
    expect(input.value).toBe('');
  });

  it('picks the search parameter a type is found by', () => {
    expect(textSearchParam(new Set(['name', 'identifier']))).toBe('name');
    expect(textSearchParam(new Set(['title', 'code']))).toBe('title');
    expect(textSearchParam(new Set(['code']))).toBe('code:text');
    expect(textSearchParam(new Set(['status']))).toBe('_id');
  });
});
