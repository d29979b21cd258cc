import { Group, Select, TextInput } from '@mantine/core';
import { useDebouncedValue } from '@mantine/hooks';
import type { Coding } from '@hearth/core';
import { useEffect, useState, type ReactNode } from 'react';
import { useHearth, useMetadata } from '../provider/HearthProvider.js';
import { codingKey, codingLabel, expandValueSet } from './valueset.js';
import { serverSearchProps } from '../util/server-search.js';

export interface CodingInputProps {
  label?: string;
  /** The value set to pick from; without one, system, code and display are typed in. */
  valueSet?: string;
  value?: Coding;
  onChange: (value: Coding | undefined) => void;
  error?: string;
  required?: boolean;
  name?: string;
}

/** Hook: the codes of a value set matching what the user types, debounced. */
export function useValueSetSearch(valueSet: string | undefined, search: string) {
  const client = useHearth();
  const metadata = useMetadata();
  const [debounced] = useDebouncedValue(search, 250);
  const [codes, setCodes] = useState<Coding[]>([]);
  const [failed, setFailed] = useState(false);
  const [loading, setLoading] = useState(false);
  useEffect(() => {
    if (!valueSet) {
      return;
    }
    let live = true;
    setLoading(true);
    expandValueSet(client, metadata, valueSet, debounced)
      .then((c) => {
        if (live) {
          setCodes(c);
          setFailed(false);
        }
      })
      .catch(() => live && setFailed(true))
      .finally(() => live && setLoading(false));
    return () => {
      live = false;
    };
  }, [client, metadata, valueSet, debounced]);
  return { codes, failed, loading };
}

/** A Coding: chosen from a value set (searched on the server as you type), or typed in. */
export function CodingInput({ label, valueSet, value, onChange, error, required, name }: CodingInputProps): ReactNode {
  const [search, setSearch] = useState('');
  const { codes, failed, loading } = useValueSetSearch(
    valueSet,
    search === (value ? codingLabel(value) : '') ? '' : search,
  );
  if (!valueSet || failed) {
    return (
      <Group gap="xs" grow align="flex-start">
        <TextInput
          label={`${label ?? 'Coding'} system`}
          value={value?.system ?? ''}
          onChange={(e) => onChange({ ...value, system: e.currentTarget.value || undefined })}
        />
        <TextInput
          label={`${label ?? 'Coding'} code`}
          required={required}
          error={error}
          value={value?.code ?? ''}
          onChange={(e) => onChange({ ...value, code: e.currentTarget.value || undefined })}
        />
        <TextInput
          label={`${label ?? 'Coding'} display`}
          value={value?.display ?? ''}
          onChange={(e) => onChange({ ...value, display: e.currentTarget.value || undefined })}
        />
      </Group>
    );
  }
  const options = codes.map((c) => ({ value: codingKey(c), label: codingLabel(c) }));
  if (value?.code && !options.some((o) => o.value === codingKey(value))) {
    options.unshift({ value: codingKey(value), label: codingLabel(value) });
  }
  return (
    <Select
      label={label}
      name={name}
      required={required}
      error={error}
      {...serverSearchProps({ label, search, onSearchChange: setSearch, loading, nothingFound: 'No matching codes' })}
      data={options}
      value={value?.code ? codingKey(value) : null}
      onChange={(key) => {
        const chosen = [...codes, ...(value ? [value] : [])].find((c) => codingKey(c) === key);
        onChange(chosen ? { system: chosen.system, code: chosen.code, display: chosen.display } : undefined);
      }}
    />
  );
}
