import { ActionIcon, Button, Group, Modal, Select, Stack, Text, TextInput } from '@mantine/core';
import { Operator, type Filter } from '@hearth/core';
import { useEffect, useState, type ReactNode } from 'react';
import { useMetadata } from '../provider/HearthProvider.js';
import { useSearchParams } from '../provider/hooks.js';
import { bindingCodes, searchParamElement, type SearchParamInfo } from '../provider/metadata.js';
import { ReferenceInput } from '../ReferenceInput/ReferenceInput.js';
import { operatorsFor } from './operators.js';

export interface FilterEditorProps {
  opened: boolean;
  resourceType: string;
  filters: Filter[];
  /** A parameter to start a new filter row with (from a column's menu). */
  initialCode?: string;
  onApply: (filters: Filter[]) => void;
  onClose: () => void;
}

/** Edits a search's filters: one row per condition, with the input each parameter type needs. */
export function FilterEditor(props: FilterEditorProps): ReactNode {
  const params = useSearchParams(props.resourceType);
  const [rows, setRows] = useState<Filter[]>(props.filters);
  useEffect(() => {
    if (props.opened) {
      const start = [...props.filters];
      if (props.initialCode) {
        start.push({ code: props.initialCode, operator: Operator.EQUALS, value: '' });
      }
      setRows(start);
    }
  }, [props.opened, props.filters, props.initialCode]);

  const update = (index: number, patch: Partial<Filter>) =>
    setRows(rows.map((r, i) => (i === index ? { ...r, ...patch } : r)));

  return (
    <Modal opened={props.opened} onClose={props.onClose} title="Filters" size="xl">
      <form
        onSubmit={(e) => {
          e.preventDefault();
          props.onApply(rows.filter((r) => r.code && (r.value !== '' || r.operator === Operator.MISSING)));
        }}
      >
        <Stack gap="sm">
          {rows.length === 0 && <Text c="dimmed">No filters: every {props.resourceType} is shown.</Text>}
          {rows.map((row, index) => {
            const param = params.find((p) => p.code === row.code);
            return (
              <Group key={index} align="flex-end" wrap="wrap" gap="xs">
                <Select
                  label="Parameter"
                  aria-label={`Filter ${index + 1} parameter`}
                  searchable
                  w={200}
                  data={params.map((p) => p.code)}
                  value={row.code || null}
                  onChange={(code) => update(index, { code: code ?? '', operator: Operator.EQUALS, value: '' })}
                />
                <Select
                  label="Operator"
                  aria-label={`Filter ${index + 1} operator`}
                  w={150}
                  allowDeselect={false}
                  data={operatorsFor(param?.type ?? 'string')}
                  value={row.operator}
                  onChange={(op) =>
                    op &&
                    update(index, { operator: op as Operator, value: op === Operator.MISSING ? 'true' : row.value })
                  }
                />
                <div style={{ flex: 1, minWidth: 220 }}>
                  <FilterValueInput
                    resourceType={props.resourceType}
                    param={param}
                    index={index}
                    operator={row.operator}
                    value={row.value}
                    onChange={(value) => update(index, { value })}
                  />
                </div>
                <ActionIcon
                  variant="subtle"
                  color="red"
                  mb={4}
                  aria-label={`Remove filter ${index + 1}`}
                  onClick={() => setRows(rows.filter((_, i) => i !== index))}
                >
                  ×
                </ActionIcon>
              </Group>
            );
          })}
          <Group justify="space-between">
            <Group gap="xs">
              <Button
                variant="light"
                onClick={() =>
                  setRows([
                    ...rows,
                    { code: params.find((p) => p.code === 'name')?.code ?? '', operator: Operator.EQUALS, value: '' },
                  ])
                }
              >
                Add filter
              </Button>
              <Button
                variant="subtle"
                onClick={() => {
                  // A range is two conditions on one date parameter: on or after, and on or before.
                  const date =
                    params.find((p) => p.type === 'date' && !p.code.startsWith('_')) ??
                    params.find((p) => p.type === 'date');
                  const code = date?.code ?? '_lastUpdated';
                  setRows([
                    ...rows,
                    { code, operator: Operator.GREATER_THAN_OR_EQUALS, value: '' },
                    { code, operator: Operator.LESS_THAN_OR_EQUALS, value: '' },
                  ]);
                }}
              >
                Add date range
              </Button>
            </Group>
            <Group>
              <Button variant="default" onClick={props.onClose}>
                Cancel
              </Button>
              <Button type="submit">Apply</Button>
            </Group>
          </Group>
        </Stack>
      </form>
    </Modal>
  );
}

function FilterValueInput(props: {
  resourceType: string;
  param: SearchParamInfo | undefined;
  index: number;
  operator: Operator;
  value: string;
  onChange: (value: string) => void;
}): ReactNode {
  const { param, index, operator, value, onChange } = props;
  const metadata = useMetadata(props.resourceType);
  const label = `Filter ${index + 1} value`;
  if (operator === Operator.MISSING) {
    return (
      <Select
        label="Value"
        aria-label={label}
        data={['true', 'false']}
        value={value || 'true'}
        allowDeselect={false}
        onChange={(v) => onChange(v ?? 'true')}
      />
    );
  }
  if (param?.type === 'date') {
    return (
      <TextInput
        type="date"
        label="Value"
        aria-label={label}
        value={value}
        onChange={(e) => onChange(e.currentTarget.value)}
      />
    );
  }
  if (param?.type === 'reference') {
    return (
      <ReferenceInput
        label="Value"
        targetTypes={param.target}
        value={value ? { reference: value } : undefined}
        onChange={(ref) => onChange(ref?.reference ?? '')}
      />
    );
  }
  // A token bound to an enumerated value set (status, gender...): pick from its codes.
  const element =
    param?.type === 'token' && metadata ? searchParamElement(metadata, props.resourceType, param) : undefined;
  const codes = element && metadata ? bindingCodes(metadata, element) : undefined;
  if (codes?.length && operator !== Operator.TEXT) {
    return (
      <Select
        label="Value"
        aria-label={label}
        searchable
        data={[...new Set(codes.map((c) => c.code))]}
        value={value || null}
        onChange={(v) => onChange(v ?? '')}
      />
    );
  }
  const placeholder =
    param?.type === 'token' ? 'code or system|code' : param?.type === 'quantity' ? 'value|system|unit' : undefined;
  return (
    <TextInput
      label="Value"
      aria-label={label}
      placeholder={placeholder}
      value={value}
      onChange={(e) => onChange(e.currentTarget.value)}
    />
  );
}
