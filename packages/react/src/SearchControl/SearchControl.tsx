import {
  Badge,
  Button,
  Checkbox,
  CloseButton,
  Group,
  Loader,
  Menu,
  Modal,
  MultiSelect,
  Pagination,
  Popover,
  Select,
  Stack,
  Table,
  Text,
  TextInput,
  UnstyledButton,
} from '@mantine/core';
import {
  Operator,
  searchRequestToParams,
  type Bundle,
  type Filter,
  type Resource,
  type SearchRequest,
} from '@hearth/core';
import { useState, type ReactNode } from 'react';
import { OperationOutcomeAlert } from '../OperationOutcomeAlert/OperationOutcomeAlert.js';
import { useHearth } from '../provider/HearthProvider.js';
import { useAsync, useSearchParams } from '../provider/hooks.js';
import { ParamCell } from './ParamCell.js';
import { FilterEditor } from './FilterEditor.js';
import { operatorLabel } from './operators.js';

export interface SearchControlProps {
  /** The search shown; the component is controlled: changes come back through onChange. */
  search: SearchRequest;
  /** Columns: search parameter codes. Default: a few that suit the type. */
  columns?: string[];
  onChange: (search: SearchRequest, columns: string[]) => void;
  onClick?: (resource: Resource) => void;
  onNew?: () => void;
  /** Row checkboxes and bulk delete. Default true. */
  checkboxesEnabled?: boolean;
}

const PREFERRED = ['name', 'title', 'status', 'code', 'subject', 'patient', 'date', 'birthdate', 'gender', 'email'];

/** Columns shown when none are chosen: the id, up to four telling parameters, and the update time. */
export function defaultColumns(params: { code: string }[]): string[] {
  const codes = new Set(params.map((p) => p.code));
  return ['_id', ...PREFERRED.filter((c) => codes.has(c)).slice(0, 4), '_lastUpdated'];
}

/** The page sizes offered: the usual ones, and the current one (from a URL's _count) among them. */
function pageSizes(current: number): string[] {
  return [...new Set([10, 20, 50, 100, current])].sort((a, b) => a - b).map(String);
}

/**
 * Searches any resource type: columns from its search parameters, filters per column with an
 * input suited to the parameter type, sort, paging with the total, row selection and bulk delete.
 */
export function SearchControl(props: SearchControlProps): ReactNode {
  const { search, onChange, onClick, onNew, checkboxesEnabled = true } = props;
  const client = useHearth();
  const params = useSearchParams(search.resourceType);
  const columns = props.columns?.length ? props.columns : defaultColumns(params);
  const [editing, setEditing] = useState<{ code?: string } | undefined>(undefined);
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [deleteError, setDeleteError] = useState<unknown>(undefined);
  const [confirming, setConfirming] = useState(false);
  const [deleting, setDeleting] = useState(false);
  const [quick, setQuick] = useState('');
  const count = search.count ?? 20;
  const offset = search.offset ?? 0;

  const query = new URLSearchParams(searchRequestToParams({ ...search, fields: undefined, count, total: 'accurate' }));
  const result = useAsync<Bundle>(
    () => client.search(search.resourceType as 'Patient', query, { cache: 'no-cache' }) as Promise<Bundle>,
    `${search.resourceType}?${query.toString()}`,
  );
  const resources = (result.data?.entry ?? [])
    .filter((e) => e.search?.mode !== 'include' && e.resource)
    .map((e) => e.resource as Resource);
  const total = result.data?.total;

  const change = (next: Partial<SearchRequest>, nextColumns = columns) => {
    setSelected(new Set());
    onChange({ ...search, ...next }, nextColumns);
  };
  const setFilters = (filters: Filter[]) => change({ filters, offset: undefined });
  const sortBy = (code: string, descending: boolean) =>
    change({ sortRules: [{ code, descending }], offset: undefined });
  const quickParam = params.find((p) => p.code === 'name') ?? params.find((p) => p.code === 'title');

  async function deleteSelected(): Promise<void> {
    setDeleteError(undefined);
    setDeleting(true);
    // Rows deleted before a failure stay deleted; the rest stay selected, and the error shows.
    const remaining = new Set(selected);
    try {
      for (const id of selected) {
        await client.deleteResource(search.resourceType as 'Patient', id);
        remaining.delete(id);
      }
    } catch (err) {
      setDeleteError(err);
    } finally {
      client.invalidateSearches(search.resourceType);
      setSelected(remaining);
      setDeleting(false);
      setConfirming(false);
      result.reload();
    }
  }

  const sortRule = search.sortRules?.[0];
  return (
    <Stack gap="sm">
      <Group justify="space-between" wrap="wrap" gap="xs">
        <Group gap="xs" wrap="wrap">
          {onNew && <Button onClick={onNew}>New…</Button>}
          <Button variant="default" onClick={() => setEditing({})}>
            Filters{search.filters?.length ? ` (${search.filters.length})` : ''}
          </Button>
          <Popover position="bottom-start" shadow="md" width={320} trapFocus>
            <Popover.Target>
              <Button variant="default">Columns</Button>
            </Popover.Target>
            <Popover.Dropdown>
              <MultiSelect
                label="Columns"
                searchable
                data={params.map((p) => p.code)}
                value={columns}
                onChange={(next) => change({}, next)}
                comboboxProps={{ withinPortal: false }}
              />
            </Popover.Dropdown>
          </Popover>
          {checkboxesEnabled && selected.size > 0 && (
            <Button color="red" variant="outline" onClick={() => setConfirming(true)}>
              Delete {selected.size} selected
            </Button>
          )}
          <Button variant="subtle" onClick={result.reload}>
            Refresh
          </Button>
        </Group>
        {quickParam && (
          <form
            onSubmit={(e) => {
              e.preventDefault();
              const others = (search.filters ?? []).filter((f) => f.code !== quickParam.code);
              setFilters(
                quick ? [...others, { code: quickParam.code, operator: Operator.CONTAINS, value: quick }] : others,
              );
            }}
          >
            <TextInput
              aria-label={`Search by ${quickParam.code}`}
              placeholder={`Search by ${quickParam.code}`}
              value={quick}
              onChange={(e) => setQuick(e.currentTarget.value)}
            />
          </form>
        )}
      </Group>

      {(search.filters?.length ?? 0) > 0 && (
        <Group gap={6} aria-label="Active filters">
          {search.filters?.map((f, i) => (
            <Badge
              key={i}
              variant="light"
              size="lg"
              tt="none"
              rightSection={
                <CloseButton
                  size="xs"
                  aria-label={`Remove filter ${f.code}`}
                  onClick={() => setFilters((search.filters ?? []).filter((_, j) => j !== i))}
                />
              }
            >
              {f.code} {operatorLabel(params.find((p) => p.code === f.code)?.type ?? 'string', f.operator)} {f.value}
            </Badge>
          ))}
        </Group>
      )}

      {result.error !== undefined && <OperationOutcomeAlert error={result.error} />}
      {deleteError !== undefined && <OperationOutcomeAlert error={deleteError} title="Delete failed" />}

      <Table.ScrollContainer minWidth={600}>
        <Table striped highlightOnHover stickyHeader aria-label={`${search.resourceType} search results`}>
          <Table.Thead>
            <Table.Tr>
              {checkboxesEnabled && (
                <Table.Th w={40}>
                  <Checkbox
                    aria-label="Select all"
                    checked={resources.length > 0 && resources.every((r) => selected.has(r.id as string))}
                    onChange={(e) =>
                      setSelected(e.currentTarget.checked ? new Set(resources.map((r) => r.id as string)) : new Set())
                    }
                  />
                </Table.Th>
              )}
              {columns.map((code) => (
                <Table.Th key={code}>
                  <Menu position="bottom-start" withinPortal>
                    <Menu.Target>
                      <UnstyledButton fw={600} fz="sm" aria-label={`Column ${code}`}>
                        {code}
                        {sortRule?.code === code ? (sortRule.descending ? ' ↓' : ' ↑') : ''}
                      </UnstyledButton>
                    </Menu.Target>
                    <Menu.Dropdown>
                      <Menu.Item onClick={() => sortBy(code, false)}>Sort ascending</Menu.Item>
                      <Menu.Item onClick={() => sortBy(code, true)}>Sort descending</Menu.Item>
                      <Menu.Item onClick={() => setEditing({ code })}>Filter…</Menu.Item>
                      <Menu.Item
                        onClick={() =>
                          change(
                            {},
                            columns.filter((c) => c !== code),
                          )
                        }
                      >
                        Hide column
                      </Menu.Item>
                    </Menu.Dropdown>
                  </Menu>
                </Table.Th>
              ))}
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {resources.map((resource) => (
              <Table.Tr
                key={resource.id}
                style={{ cursor: onClick ? 'pointer' : undefined }}
                onClick={() => onClick?.(resource)}
                onKeyDown={(e) => e.key === 'Enter' && e.target === e.currentTarget && onClick?.(resource)}
                tabIndex={onClick ? 0 : undefined}
                aria-label={`${resource.resourceType} ${resource.id}`}
              >
                {checkboxesEnabled && (
                  <Table.Td onClick={(e) => e.stopPropagation()}>
                    <Checkbox
                      aria-label={`Select ${resource.id}`}
                      checked={selected.has(resource.id as string)}
                      onChange={(e) => {
                        const next = new Set(selected);
                        if (e.currentTarget.checked) next.add(resource.id as string);
                        else next.delete(resource.id as string);
                        setSelected(next);
                      }}
                    />
                  </Table.Td>
                )}
                {columns.map((code) => (
                  <Table.Td key={code}>
                    <ParamCell resource={resource} expression={params.find((p) => p.code === code)?.expression} />
                  </Table.Td>
                ))}
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </Table.ScrollContainer>
      {result.loading && <Loader size="sm" aria-label="Loading results" />}
      {!result.loading && resources.length === 0 && result.error === undefined && (
        <Text c="dimmed">No {search.resourceType} found.</Text>
      )}

      <Group justify="space-between">
        <Text size="sm" c="dimmed" aria-live="polite">
          {total === 0
            ? 'No results'
            : total !== undefined
              ? `${offset + 1}–${offset + resources.length} of ${total}`
              : `${resources.length} shown`}
        </Text>
        <Group gap="xs">
          <Select
            aria-label="Page size"
            w={90}
            data={pageSizes(count)}
            value={String(count)}
            allowDeselect={false}
            onChange={(v) => v && change({ count: Number(v), offset: undefined })}
          />
          {total !== undefined && total > count && (
            <Pagination
              total={Math.ceil(total / count)}
              value={Math.floor(offset / count) + 1}
              onChange={(page) => change({ offset: (page - 1) * count || undefined })}
              getControlProps={(control) => ({ 'aria-label': `${control} page` })}
              getItemProps={(page) => ({ 'aria-label': `Page ${page}` })}
            />
          )}
        </Group>
      </Group>

      <Modal
        opened={confirming}
        onClose={() => !deleting && setConfirming(false)}
        title={`Delete ${selected.size} ${search.resourceType}?`}
      >
        <Stack>
          <Text size="sm">
            The selected resources are deleted; their history stays readable. This cannot be undone here.
          </Text>
          <Group justify="flex-end">
            <Button variant="default" onClick={() => setConfirming(false)} disabled={deleting}>
              Cancel
            </Button>
            <Button color="red" onClick={() => void deleteSelected()} loading={deleting} data-autofocus>
              Delete
            </Button>
          </Group>
        </Stack>
      </Modal>

      <FilterEditor
        opened={editing !== undefined}
        resourceType={search.resourceType}
        filters={search.filters ?? []}
        initialCode={editing?.code}
        onClose={() => setEditing(undefined)}
        onApply={(filters) => {
          setEditing(undefined);
          setFilters(filters);
        }}
      />
    </Stack>
  );
}
