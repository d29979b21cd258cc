import { Group, Stack, Title } from '@mantine/core';
import { formatSearchQuery, parseSearchRequest, type SearchRequest } from '@hearth/core';
import { isKnownResourceType, OperationOutcomeAlert, SearchControl, useMetadata } from '@hearth/react';
import type { ReactNode } from 'react';
import { useLocation, useNavigate, useParams } from 'react-router';
import { PatientSearchBox } from '../components/PatientSearchBox.js';

/** `/:resourceType`: search with the whole state (filters, sort, page, columns) in the query string. */
export function SearchPage(): ReactNode {
  const { resourceType = 'Patient' } = useParams();
  const location = useLocation();
  const navigate = useNavigate();
  const metadata = useMetadata(resourceType);
  const params = new URLSearchParams(location.search);
  const columns = params.get('_fields')?.split(',').filter(Boolean);
  params.delete('_fields');
  let search: SearchRequest | undefined;
  let error: unknown;
  try {
    search = parseSearchRequest(resourceType, params);
  } catch (err) {
    error = err;
  }
  if (metadata && !isKnownResourceType(metadata, resourceType)) {
    return <OperationOutcomeAlert error={new Error(`Unknown resource type: ${resourceType}`)} />;
  }
  return (
    <Stack>
      <Group justify="space-between">
        <Title order={2}>{resourceType}</Title>
      </Group>
      {resourceType === 'Patient' && <PatientSearchBox />}
      {error !== undefined && <OperationOutcomeAlert error={error} />}
      {search && (
        <SearchControl
          key={resourceType}
          search={search}
          columns={columns}
          onNew={() => navigate(`/${resourceType}/new`)}
          onClick={(r) => navigate(`/${r.resourceType}/${r.id}`)}
          onChange={(next, cols) => {
            const query = formatSearchQuery({ ...next, resourceType });
            const fields = cols.length ? `${query ? '&' : '?'}_fields=${cols.join(',')}` : '';
            navigate(`/${resourceType}${query}${fields}`);
          }}
        />
      )}
    </Stack>
  );
}
