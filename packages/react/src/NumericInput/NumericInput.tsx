import { TextInput, type TextInputProps } from '@mantine/core';
import { useEffect, useState, type ReactNode } from 'react';

export interface NumericInputProps extends Omit<TextInputProps, 'value' | 'onChange' | 'type'> {
  value: number | string | undefined;
  /** A number once the text is one; the text itself while it is not (so that it can be reported). */
  onChange: (value: number | string | undefined) => void;
  /** Whole numbers only (FHIR integer, positiveInt, unsignedInt). */
  integer?: boolean;
}

/** The number a text means, or undefined when it means none ('', '1.', 'abc'). */
export function parseNumeric(text: string, integer = false): number | undefined {
  const t = text.trim();
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(t) || t.endsWith('.')) {
    return undefined;
  }
  const n = Number(t);
  return Number.isFinite(n) && (!integer || Number.isInteger(n)) ? n : undefined;
}

/**
 * A number typed as text. The text is kept as typed, so '61.' and '0.0' stay on screen while the
 * user goes on to '61.5' and '0.05'; only what it means is reported.
 */
export function NumericInput({ value, onChange, integer, error, ...rest }: NumericInputProps): ReactNode {
  const [text, setText] = useState(value === undefined ? '' : String(value));
  // A value set from outside (a reset, another input) replaces the text unless it means the same.
  useEffect(() => {
    setText((current) =>
      value === undefined
        ? current.trim() === '' || parseNumeric(current, integer) !== undefined
          ? ''
          : current
        : typeof value === 'number' && parseNumeric(current, integer) === value
          ? current
          : String(value),
    );
  }, [value, integer]);
  const invalid = text.trim() !== '' && parseNumeric(text, integer) === undefined;
  return (
    <TextInput
      {...rest}
      inputMode={integer ? 'numeric' : 'decimal'}
      value={text}
      error={
        error ??
        (invalid && !/\.$/.test(text.trim()) ? (integer ? 'Enter a whole number' : 'Enter a number') : undefined)
      }
      onChange={(e) => {
        const next = e.currentTarget.value;
        setText(next);
        const n = parseNumeric(next, integer);
        onChange(next.trim() === '' ? undefined : (n ?? next));
      }}
    />
  );
}
