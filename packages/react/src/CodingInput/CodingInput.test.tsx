// @vitest-environment jsdom
import { screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { useState } from 'react';
import type { CodeableConcept } from '@hearth/core';
import { describe, expect, it, vi } from 'vitest';
import { CodeableConceptInput } from '../CodeableConceptInput/CodeableConceptInput.js';
import { mockClient, renderWithHearth, Reply } from '../test/render.js';
import { CodingInput } from './CodingInput.js';

describe('CodingInput', () => {
  it('searches the value set as the user types', async () => {
    const user = userEvent.setup({ delay: null });
    const { client, requests } = mockClient({
      'GET /fhir/R4/ValueSet/$expand': (req) => ({
        resourceType: 'ValueSet',
        status: 'active',
        expansion: {
          timestamp: '2024-01-01T00:00:00Z',
          contains:
            req.url.searchParams.get('filter') === 'asth'
              ? [{ system: 'http://snomed.info/sct', code: '195967001', display: 'Asthma' }]
              : [],
        },
      }),
    });
    const onChange = vi.fn();
    renderWithHearth(<CodingInput label="Condition" valueSet="http://example.org/vs" onChange={onChange} />, client);
    await user.type(screen.getByRole('textbox', { name: 'Condition' }), 'asth');
    await user.click(await screen.findByRole('option', { name: 'Asthma (195967001)' }));
    expect(onChange).toHaveBeenCalledWith({ system: 'http://snomed.info/sct', code: '195967001', display: 'Asthma' });
    expect(requests.some((r) => r.url.searchParams.get('filter') === 'asth')).toBe(true);
  });

  it('falls back to the value sets the schema enumerates when $expand is unavailable', async () => {
    const user = userEvent.setup({ delay: null });
    const { client } = mockClient({
      'GET /fhir/R4/ValueSet/$expand': () =>
        new Reply(404, { resourceType: 'OperationOutcome', issue: [{ severity: 'error', code: 'not-found' }] }),
    });
    const onChange = vi.fn();
    renderWithHearth(
      <CodingInput label="Gender" valueSet="http://hl7.org/fhir/ValueSet/administrative-gender" onChange={onChange} />,
      client,
    );
    await user.click(screen.getByRole('textbox', { name: 'Gender' }));
    await user.click(await screen.findByRole('option', { name: 'other' }));
    expect(onChange).toHaveBeenCalledWith({
      system: 'http://hl7.org/fhir/administrative-gender',
      code: 'other',
      display: undefined,
    });
  });

  it('takes system, code and display typed in when there is no value set', async () => {
    const user = userEvent.setup({ delay: null });
    const { client } = mockClient({});
    const onChange = vi.fn();
    function Stateful() {
      const [value, setValue] = useState<CodeableConcept | undefined>(undefined);
      return (
        <CodeableConceptInput
          label="Reason"
          value={value}
          onChange={(v) => {
            setValue(v);
            onChange(v);
          }}
        />
      );
    }
    renderWithHearth(<Stateful />, client);
    await user.type(screen.getByLabelText('Reason code'), 'X');
    await user.type(screen.getByLabelText('Reason text'), 'Y');
    await waitFor(() => expect(onChange).toHaveBeenLastCalledWith({ coding: [{ code: 'X' }], text: 'Y' }));
  });
});
