// @vitest-environment jsdom
import { fireEvent, screen } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import { mockClient, renderWithHearth } from '../test/render.js';
import { DateTimeInput, fhirToLocal, localToFhir } from './DateTimeInput.js';

describe('DateTimeInput', () => {
  it('converts between local input values and FHIR dateTimes with a zone offset', () => {
    const fhir = localToFhir('2024-03-05T14:30') as string;
    expect(fhir).toMatch(/^2024-03-05T14:30:00[+-]\d{2}:\d{2}$/);
    expect(new Date(fhir).getTime()).toBe(new Date('2024-03-05T14:30').getTime());
    expect(fhirToLocal(fhir)).toBe('2024-03-05T14:30');
    expect(fhirToLocal('2024-03')).toBe('2024-03-01T00:00');
    expect(localToFhir('')).toBeUndefined();
    expect(fhirToLocal('not a date')).toBe('');
  });

  it('edits a date as YYYY-MM-DD and a dateTime with its offset', () => {
    const { client } = mockClient({});
    const onDate = vi.fn();
    const onDateTime = vi.fn();
    renderWithHearth(
      <>
        <DateTimeInput label="Birth date" type="date" onChange={onDate} />
        <DateTimeInput label="Onset" onChange={onDateTime} />
      </>,
      client,
    );
    fireEvent.change(screen.getByLabelText('Birth date'), { target: { value: '2001-02-03' } });
    expect(onDate).toHaveBeenCalledWith('2001-02-03');
    fireEvent.change(screen.getByLabelText('Onset'), { target: { value: '2001-02-03T04:05' } });
    expect(onDateTime.mock.calls[0][0]).toMatch(/^2001-02-03T04:05:00[+-]\d{2}:\d{2}$/);
  });
});
