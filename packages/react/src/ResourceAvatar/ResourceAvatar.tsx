import { Avatar, type AvatarProps } from '@mantine/core';
import { getDisplayString, type Attachment, type Reference, type Resource } from '@hearth/core';
import type { ReactNode } from 'react';
import { useResource } from '../provider/hooks.js';

export interface ResourceAvatarProps extends Omit<AvatarProps, 'src' | 'alt'> {
  value?: Resource | Reference | string;
}

/** Initials or photo (Patient.photo, Practitioner.photo) of a resource, with its name as alt text. */
export function ResourceAvatar({ value, ...rest }: ResourceAvatarProps): ReactNode {
  const { data } = useResource(value);
  const name: string = data
    ? getDisplayString(data)
    : typeof value === 'object' && 'display' in value && typeof value.display === 'string'
      ? value.display
      : '';
  const photo = (data?.photo as Attachment[] | undefined)?.find((p) => p.url && /^(https?:|data:)/.test(p.url));
  const initials = name
    .split(/\s+/)
    .filter((w: string) => /^[\p{L}\p{N}]/u.test(w))
    .slice(0, 2)
    .map((w: string) => w[0].toUpperCase())
    .join('');
  return (
    <Avatar src={photo?.url} alt={name || 'resource'} radius="xl" color="blue" {...rest}>
      {initials || '?'}
    </Avatar>
  );
}
