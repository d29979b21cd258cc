// @vitest-environment jsdom
import { screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { useState } from 'react';
import { describe, expect, it, vi } from 'vitest';
import { mockClient, renderWithHearth } from '../test/render.js';
import { NumericInput, parseNumeric } from './NumericInput.js';

function Controlled(props: { integer?: boolean; report: (v: unknown) => void }) {
  const [value, setValue] = useState<number | string | undefined>(undefined);
  return (
    <NumericInput
      label="Dose"
      integer={props.integer}
      value={value}
      onChange={(v) => {
        setValue(v);
        props.report(v);
      }}
    />
  );
}

describe('NumericInput', () => {
  it('parses numbers, and nothing that is not one', () => {
    expect(parseNumeric('61.5')).toBe(61.5);
    expect(parseNumeric(' -0.05 ')).toBe(-0.05);
    expect(parseNumeric('1e3')).toBe(1000);
    expect(parseNumeric('61.')).toBeUndefined();
    expect(parseNumeric('abc')).toBeUndefined();
    expect(parseNumeric('')).toBeUndefined();
    expect(parseNumeric('2.5', true)).toBeUndefined();
    expect(parseNumeric('7', true)).toBe(7);
  });

  it('keeps a decimal point and leading zeros while they are typed', async () => {
    const user = userEvent.setup({ delay: null });
    const report = vi.fn();
    renderWithHearth(<Controlled report={report} />, mockClient({}).client);
    const input = screen.getByLabelText('Dose') as HTMLInputElement;
    await user.type(input, '0.05');
    expect(input.value).toBe('0.05');
    expect(report.mock.calls.at(-1)?.[0]).toBe(0.05);
    await user.clear(input);
    expect(report.mock.calls.at(-1)?.[0]).toBeUndefined();
  });

  it('marks text that is not a number, and reports it as text', async () => {
    const user = userEvent.setup({ delay: null });
    const report = vi.fn();
    renderWithHearth(<Controlled integer report={report} />, mockClient({}).client);
    await user.type(screen.getByLabelText('Dose'), '2.5');
    expect(screen.getByText('Enter a whole number')).toBeTruthy();
    expect(report.mock.calls.at(-1)?.[0]).toBe('2.5');
  });
});
