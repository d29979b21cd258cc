import { Loader, Table, Text } from '@mantine/core';
import type { Reference, Resource } from '@hearth/core';
import type { ReactNode } from 'react';
import { OperationOutcomeAlert } from '../OperationOutcomeAlert/OperationOutcomeAlert.js';
import { useMetadata } from '../provider/HearthProvider.js';
import { useResource } from '../provider/hooks.js';
import { choiceBase, choiceProperty, type UiTypeSchema } from '../provider/metadata.js';
import { ResourceBadge } from '../ResourceBadge/ResourceBadge.js';
import { formatValue } from '../util/format.js';
import { humanize } from '../util/values.js';
import { HIDDEN_ELEMENTS } from '../ResourceForm/context.js';

export interface ResourceTableProps {
  value: Resource | Reference | string;
  /** Also list elements without a value. */
  showEmpty?: boolean;
}

/** A read-only view of a resource: each element that has a value, in definition order. */
export function ResourceTable({ value, showEmpty = false }: ResourceTableProps): ReactNode {
  const { data: resource, error, loading } = useResource(value);
  const metadata = useMetadata(resource?.resourceType);
  if (error) {
    return <OperationOutcomeAlert error={error} />;
  }
  if (loading || !resource || !metadata) {
    return <Loader size="sm" aria-label="Loading" />;
  }
  const schema = metadata.types[resource.resourceType];
  return (
    <Table aria-label={`${resource.resourceType} details`} variant="vertical" layout="fixed" withTableBorder>
      <Table.Tbody>
        <Rows schema={schema} value={resource} showEmpty={showEmpty} />
      </Table.Tbody>
    </Table>
  );
}

function Rows({
  schema,
  value,
  showEmpty,
}: {
  schema: UiTypeSchema | undefined;
  value: Record<string, unknown>;
  showEmpty: boolean;
}): ReactNode {
  const rows: ReactNode[] = [];
  if (!schema) {
    return null;
  }
  for (const [key, element] of Object.entries(schema.elements)) {
    if (HIDDEN_ELEMENTS.has(key) && key !== 'id') continue;
    let property = key;
    let v: unknown = value[key];
    if (key.endsWith('[x]')) {
      const code = element.type.find((t) => value[choiceProperty(key, t.code)] !== undefined)?.code;
      property = code ? choiceProperty(key, code) : choiceBase(key);
      v = code ? value[property] : undefined;
    }
    if (v === undefined && !showEmpty) continue;
    rows.push(
      <Table.Tr key={key}>
        <Table.Th w={200}>{humanize(choiceBase(key))}</Table.Th>
        <Table.Td>
          <Cell value={v} />
        </Table.Td>
      </Table.Tr>,
    );
  }
  return rows;
}

function Cell({ value }: { value: unknown }): ReactNode {
  if (Array.isArray(value)) {
    return value.map((v, i) => (
      <div key={i}>
        <Cell value={v} />
      </div>
    ));
  }
  if (value && typeof value === 'object' && 'reference' in value) {
    return <ResourceBadge value={value as Reference} avatar={false} showId />;
  }
  const text = formatValue(value);
  return (
    <Text size="sm" style={{ wordBreak: 'break-word' }}>
      {text}
    </Text>
  );
}
