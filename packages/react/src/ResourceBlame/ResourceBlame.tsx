import { Box, Loader, Table, Text } from '@mantine/core';
import { formatDateTime } from '@hearth/core';
import type { ReactNode } from 'react';
import { OperationOutcomeAlert } from '../OperationOutcomeAlert/OperationOutcomeAlert.js';
import { useHistory } from '../ResourceHistory/ResourceHistory.js';
import { blame, versionText } from '../util/diff.js';

export interface ResourceBlameProps {
  resourceType: string;
  id: string;
}

/** Each line of the current version with the version (and time) that last changed it. */
export function ResourceBlame({ resourceType, id }: ResourceBlameProps): ReactNode {
  const { data: versions, error, loading } = useHistory(resourceType, id);
  if (error) return <OperationOutcomeAlert error={error} />;
  if (loading || !versions) return <Loader size="sm" aria-label="Loading history" />;
  const oldestFirst = [...versions].reverse();
  const lines = blame(oldestFirst.map(versionText));
  return (
    <Table aria-label="Blame" withRowBorders={false} fz={13} ff="monospace">
      <Table.Tbody>
        {lines.map((line, i) => {
          const v = oldestFirst[line.version];
          const first = i === 0 || lines[i - 1].version !== line.version;
          return (
            <Table.Tr key={i} style={{ borderTop: first ? '1px solid var(--mantine-color-gray-3)' : undefined }}>
              <Table.Td w={230} c="dimmed" style={{ whiteSpace: 'nowrap' }}>
                {first && (
                  <Text size="xs">
                    v{line.version + 1} · {formatDateTime(v?.meta?.lastUpdated)}
                  </Text>
                )}
              </Table.Td>
              <Table.Td>
                <Box component="pre" m={0}>
                  {line.text}
                </Box>
              </Table.Td>
            </Table.Tr>
          );
        })}
      </Table.Tbody>
    </Table>
  );
}
