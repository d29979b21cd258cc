import { Anchor, Group, Text } from '@mantine/core';
import { getDisplayString, getReferenceString, type Reference, type Resource } from '@hearth/core';
import type { MouseEvent, ReactNode } from 'react';
import { useHearthContext } from '../provider/HearthProvider.js';
import { useResource } from '../provider/hooks.js';
import { ResourceAvatar } from '../ResourceAvatar/ResourceAvatar.js';

export interface ResourceBadgeProps {
  value?: Resource | Reference;
  /** Link to the resource's page. */
  link?: boolean;
  avatar?: boolean;
}

/** A resource's avatar and name, linked to its page. */
export function ResourceBadge({ value, link = true, avatar = true }: ResourceBadgeProps): ReactNode {
  const { navigate } = useHearthContext();
  const { data, error } = useResource(value);
  if (!value) {
    return null;
  }
  const reference = data?.id ? getReferenceString(data) : ((value as Reference).reference ?? '');
  const name = data
    ? getDisplayString(data)
    : ((value as Reference).display ?? (error ? `${reference} (unavailable)` : reference));
  const text = (
    <Text span size="sm">
      {name}
    </Text>
  );
  return (
    <Group gap={6} wrap="nowrap" display="inline-flex">
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
        text
      )}
    </Group>
  );
}
