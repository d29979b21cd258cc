import { Button, Group, Stack, Text, TextInput } from '@mantine/core';
import { interpretPatientQuery } from '@hearth/react';
import { useState, type ReactNode } from 'react';
import { useNavigate } from 'react-router';

/**
 * The patient list's search box: a name, a birth date, a phone number or an identifier, read by
 * `interpretPatientQuery` and turned into the list's URL (so the search control shows it as filters).
 */
export function PatientSearchBox(): ReactNode {
  const navigate = useNavigate();
  const [text, setText] = useState('');
  const query = interpretPatientQuery(text);
  return (
    <form
      role="search"
      aria-label="Find a patient"
      onSubmit={(e) => {
        e.preventDefault();
        if (query) navigate(`/Patient?${new URLSearchParams(query.params).toString()}`);
      }}
    >
      <Stack gap={4}>
        <Group gap="xs" align="flex-end" wrap="nowrap">
          <TextInput
            label="Find a patient"
            placeholder="Name, birth date, phone or identifier"
            value={text}
            onChange={(e) => setText(e.currentTarget.value)}
            style={{ flex: 1, minWidth: 0 }}
          />
          <Button type="submit" disabled={!query}>
            Find
          </Button>
        </Group>
        <Text size="xs" c="dimmed" aria-live="polite">
          {query ? `Searching by: ${query.description}` : 'Dates as 2024-01-31 or 31/01/2024'}
        </Text>
      </Stack>
    </form>
  );
}
