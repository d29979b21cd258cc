import { MultiSelect, Stack, TextInput } from '@mantine/core';
import type { CodeableConcept, Coding } from '@hearth/core';
import { useState, type ReactNode } from 'react';
import { CodingInput, useValueSetSearch } from '../CodingInput/CodingInput.js';
import { codingKey, codingLabel } from '../CodingInput/valueset.js';
import { serverSearchProps } from '../util/server-search.js';

export interface CodeableConceptInputProps {
  label?: string;
  valueSet?: string;
  value?: CodeableConcept;
  onChange: (value: CodeableConcept | undefined) => void;
  error?: string;
  required?: boolean;
  name?: string;
}

/**
 * A CodeableConcept: codings picked from the bound value set (ValueSet/$expand as you type), or a
 * coding typed in when there is none, plus free text (hl7.org/fhir/R4/datatypes.html#CodeableConcept).
 */
export function CodeableConceptInput(props: CodeableConceptInputProps): ReactNode {
  const { label = 'Concept', valueSet, value, onChange, error, required, name } = props;
  const [search, setSearch] = useState('');
  const { codes, failed, loading } = useValueSetSearch(valueSet, search);
  const update = (coding: Coding[] | undefined, text: string | undefined) => {
    const next: CodeableConcept = { ...value, coding: coding?.length ? coding : undefined, text: text || undefined };
    onChange(next.coding || next.text ? next : undefined);
  };
  if (!valueSet || failed) {
    return (
      <Stack gap={4}>
        <CodingInput
          label={label}
          value={value?.coding?.[0]}
          required={required}
          error={error}
          onChange={(c) => update(c ? [c, ...(value?.coding?.slice(1) ?? [])] : value?.coding?.slice(1), value?.text)}
        />
        <TextInput
          label={`${label} text`}
          value={value?.text ?? ''}
          onChange={(e) => update(value?.coding, e.currentTarget.value)}
        />
      </Stack>
    );
  }
  const chosen = value?.coding ?? [];
  const byKey = new Map<string, Coding>();
  for (const c of [...chosen, ...codes]) byKey.set(codingKey(c), c);
  return (
    <MultiSelect
      label={label}
      name={name}
      required={required}
      error={error}
      {...serverSearchProps({ label, search, onSearchChange: setSearch, loading, nothingFound: 'No matching codes' })}
      data={[...byKey.entries()].map(([key, c]) => ({ value: key, label: codingLabel(c) }))}
      value={chosen.map(codingKey)}
      onChange={(keys) => {
        const codings = keys.map((k) => byKey.get(k)).filter((c): c is Coding => !!c);
        const text = value?.text ?? (codings[0]?.display || undefined);
        update(
          codings.map((c) => ({ system: c.system, code: c.code, display: c.display })),
          codings.length ? text : undefined,
        );
      }}
    />
  );
}
