import { TextInput } from '@mantine/core';
import type { ReactNode } from 'react';

export interface DateTimeInputProps {
  label?: string;
  /** 'date' (YYYY-MM-DD), 'dateTime' and 'instant' (with time and zone offset). */
  type?: 'date' | 'dateTime' | 'instant';
  value?: string;
  onChange: (value: string | undefined) => void;
  error?: string;
  required?: boolean;
  name?: string;
}

function pad(n: number): string {
  return String(n).padStart(2, '0');
}

/** A FHIR dateTime for a local 'YYYY-MM-DDTHH:mm' string, with the browser's zone offset. */
export function localToFhir(local: string): string | undefined {
  if (!local) {
    return undefined;
  }
  const date = new Date(local);
  if (Number.isNaN(date.getTime())) {
    return undefined;
  }
  const offset = -date.getTimezoneOffset();
  const sign = offset >= 0 ? '+' : '-';
  const abs = Math.abs(offset);
  const seconds = local.length > 16 ? '' : ':00';
  return `${local}${seconds}${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
}

/** The 'YYYY-MM-DDTHH:mm' local time of a FHIR dateTime, for a datetime-local input. */
export function fhirToLocal(value: string | undefined): string {
  if (!value) {
    return '';
  }
  if (/^\d{4}(-\d{2}(-\d{2})?)?$/.test(value)) {
    // A partial date (hl7.org/fhir/R4/datatypes.html#dateTime) has no time: show midnight.
    const [y, m = '01', d = '01'] = value.split('-');
    return `${y}-${m}-${d}T00:00`;
  }
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) {
    return '';
  }
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
}

/** A date or date and time, with the native pickers (keyboard accessible everywhere). */
export function DateTimeInput({
  label,
  type = 'dateTime',
  value,
  onChange,
  error,
  required,
  name,
}: DateTimeInputProps): ReactNode {
  if (type === 'date') {
    return (
      <TextInput
        type="date"
        label={label}
        name={name}
        required={required}
        error={error}
        value={value ?? ''}
        onChange={(e) => onChange(e.currentTarget.value || undefined)}
      />
    );
  }
  return (
    <TextInput
      type="datetime-local"
      label={label}
      name={name}
      required={required}
      error={error}
      value={fhirToLocal(value)}
      onChange={(e) => onChange(localToFhir(e.currentTarget.value))}
    />
  );
}
