// @vitest-environment jsdom
import { OperationOutcomeError } from '@hearth/core';
import { fireEvent, screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it, vi } from 'vitest';
import { mockClient, renderWithHearth } from '../test/render.js';
import { JsonEditor, JsonView } from './JsonEditor.js';

describe('JsonEditor', () => {
  it('submits the parsed JSON, refuses a syntax error, and shows the server outcome', async () => {
    const user = userEvent.setup({ delay: null });
    const { client } = mockClient({});
    const onSubmit = vi
      .fn()
      .mockRejectedValueOnce(
        new OperationOutcomeError({
          resourceType: 'OperationOutcome',
          issue: [
            {
              severity: 'error',
              code: 'invalid',
              details: { text: 'gender must be a code' },
              expression: ['Patient.gender'],
            },
          ],
        }),
      )
      .mockResolvedValue(undefined);
    renderWithHearth(
      <JsonEditor defaultValue={{ resourceType: 'Patient', gender: 'x' }} onSubmit={onSubmit} />,
      client,
    );
    const box = screen.getByLabelText('Resource JSON');
    fireEvent.change(box, { target: { value: '{ "resourceType": "Patient", ' } });
    expect(screen.getByRole('button', { name: 'Save' }).hasAttribute('disabled')).toBe(true);
    fireEvent.change(box, { target: { value: '{ "resourceType": "Patient", "gender": 1 }' } });
    await user.click(screen.getByRole('button', { name: 'Save' }));
    expect((await screen.findByRole('alert')).textContent).toContain('gender must be a code (Patient.gender)');
    expect(onSubmit).toHaveBeenCalledWith({ resourceType: 'Patient', gender: 1 });
    await user.click(screen.getByRole('button', { name: 'Format' }));
    expect((box as HTMLTextAreaElement).value).toBe('{\n  "resourceType": "Patient",\n  "gender": 1\n}');
    await user.click(screen.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(screen.queryByRole('alert')).toBeNull());
  });

  it('shows JSON read-only', () => {
    const { client } = mockClient({});
    renderWithHearth(<JsonView value={{ a: [1] }} />, client);
    expect(screen.getByTestId('json-view').textContent).toBe('{\n  "a": [\n    1\n  ]\n}');
  });
});
