import { Anchor, Group, Text } from '@mantine/core';
import { getDisplayString, getReferenceString, type Reference, type Resource } from '@hearth/core';
import type { MouseEvent, ReactNode } from 'react';
import { useHearthContext } from '../provider/HearthProvider.js';
import { useReferenced } from '../provider/hooks.js';
import { ResourceAvatar } from '../ResourceAvatar/ResourceAvatar.js';

export interface ResourceBadgeProps {
  value?: Resource | Reference;
  /** Link to the resource's page. */
  link?: boolean;
  avatar?: boolean;
  /** Show the reference ('Patient/123') after the name, as a secondary detail. */
  showId?: boolean;
}

/**
 * A resource's avatar and name, linked to its page. A reference shows the name of the resource it
 * points to (resolved in batches with the other references on the page; its `display` meanwhile),
 * the id only as a secondary detail.
 */
export function ResourceBadge({ value, link = true, avatar = true, showId = false }: ResourceBadgeProps): ReactNode {
  const { navigate } = useHearthContext();
  const { data, error, loading } = useReferenced(value);
  if (!value) {
    return null;
  }
  const reference = data?.id ? getReferenceString(data) : ((value as Reference).reference ?? '');
  const display = (value as Reference).display;
  const gone = !loading && !data && (error !== undefined || !display);
  const name = data ? getDisplayString(data) : (display ?? (gone ? `${reference} (unavailable)` : reference));
  const secondary = showId && reference && name !== reference && !name.startsWith(reference);
  return (
    <Group gap={6} wrap="nowrap" display="inline-flex" title={reference || undefined}>
      {avatar && <ResourceAvatar value={data ?? value} size="sm" />}
      {link && reference && !reference.startsWith('#') ? (
        <Anchor
          href={`/${reference}`}
          size="sm"
          onClick={(e: MouseEvent) => {
            e.preventDefault();
            navigate(`/${reference}`);
          }}
        >
          {name}
        </Anchor>
      ) : (
        <Text span size="sm">
          {name}
        </Text>
      )}
      {secondary && (
        <Text span size="xs" c="dimmed">
          {reference}
        </Text>
      )}
    </Group>
  );
}
