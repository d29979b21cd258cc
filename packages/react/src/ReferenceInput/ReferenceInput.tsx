import { Group, Select } from '@mantine/core';
import { useDebouncedValue } from '@mantine/hooks';
import { getDisplayString, getReferenceString, type Reference, type Resource } from '@hearth/core';
import { useEffect, useMemo, useState, type ReactNode } from 'react';
import { useHearth, useMetadata } from '../provider/HearthProvider.js';
import { getResourceTypes, getSearchParams } from '../provider/metadata.js';
import { serverSearchProps } from '../util/server-search.js';

export interface ReferenceInputProps {
  label?: string;
  /** Allowed target types (hl7.org/fhir/R4/references.html); empty or absent: any resource type. */
  targetTypes?: string[];
  value?: Reference;
  onChange: (value: Reference | undefined) => void;
  error?: string;
  required?: boolean;
  placeholder?: string;
  name?: string;
}

/** The search parameter used to find resources of a type by what a user types. */
export function textSearchParam(codes: Set<string>): string {
  for (const code of ['name', 'title', 'description', 'identifier', 'code']) {
    if (codes.has(code)) {
      return code === 'code' ? 'code:text' : code;
    }
  }
  return '_id';
}

/**
 * Chooses a resource to refer to: pick its type (when several are allowed), then search as you
 * type; the chosen resource is stored as `{ reference: 'Type/id', display }`.
 */
export function ReferenceInput(props: ReferenceInputProps): ReactNode {
  const { label, value, onChange, error, required, placeholder, name } = props;
  const client = useHearth();
  const base = useMetadata();
  const types = useMemo(
    () => (props.targetTypes?.length ? props.targetTypes : base ? getResourceTypes(base) : []),
    [props.targetTypes, base],
  );
  // Any type allowed: start with Patient, the usual target, rather than the alphabet's first.
  const firstType = types.includes('Patient') ? 'Patient' : (types[0] ?? 'Patient');
  const [targetType, setTargetType] = useState<string>(value?.reference?.split('/')[0] ?? firstType);
  const [search, setSearch] = useState('');
  const [debounced] = useDebouncedValue(search, 250);
  const metadata = useMetadata(targetType);
  const [found, setFound] = useState<Resource[]>([]);
  const [loading, setLoading] = useState(false);

  useEffect(() => {
    if (!types.includes(targetType) && types.length) {
      setTargetType(firstType);
    }
  }, [types, targetType, firstType]);

  const currentLabel = value ? (value.display ?? value.reference ?? '') : '';
  useEffect(() => {
    // The search box shows the chosen resource's name; searching it again finds nothing new.
    if (!metadata || (debounced && debounced === currentLabel)) {
      return;
    }
    let live = true;
    const codes = new Set(getSearchParams(metadata, targetType).map((p) => p.code));
    const param = textSearchParam(codes);
    const query: Record<string, string> = { _count: '10' };
    if (debounced) {
      query[param] = debounced;
    }
    setLoading(true);
    client
      .searchResources(targetType as 'Patient', query)
      .then((resources) => live && setFound(resources as Resource[]))
      .catch(() => live && setFound([]))
      .finally(() => live && setLoading(false));
    return () => {
      live = false;
    };
  }, [client, metadata, targetType, debounced, currentLabel]);

  const options = found.map((r) => ({ value: getReferenceString(r), label: getDisplayString(r) }));
  if (value?.reference && !options.some((o) => o.value === value.reference)) {
    options.unshift({ value: value.reference, label: currentLabel });
  }
  // Two resources may share a name; Mantine needs distinct labels to show the right one.
  const seen = new Map<string, number>();
  for (const o of options) {
    const n = seen.get(o.label) ?? 0;
    seen.set(o.label, n + 1);
    if (n > 0) o.label = `${o.label} (${o.value})`;
  }

  return (
    <Group gap="xs" align="flex-end" wrap="nowrap">
      {types.length > 1 && (
        <Select
          aria-label={`${label ?? 'Reference'} type`}
          data={types}
          value={targetType}
          onChange={(t) => t && setTargetType(t)}
          searchable
          w={170}
          allowDeselect={false}
          comboboxProps={{ withinPortal: true }}
        />
      )}
      <Select
        style={{ flex: 1 }}
        label={label}
        name={name}
        required={required}
        placeholder={placeholder ?? `Search ${targetType}`}
        {...serverSearchProps({ label, search, onSearchChange: setSearch, loading, nothingFound: 'No matches' })}
        data={options}
        value={value?.reference ?? null}
        error={error}
        onChange={(ref, option) =>
          onChange(ref ? { reference: ref, display: option?.label?.replace(/ \([A-Za-z]+\/[^)]+\)$/, '') } : undefined)
        }
      />
    </Group>
  );
}
