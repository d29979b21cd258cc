import { Avatar, type AvatarProps } from '@mantine/core';
import { getDisplayString, type Attachment, type Reference, type Resource } from '@hearth/core';
import { useEffect, useState, type ReactNode } from 'react';
import { useHearth } from '../provider/HearthProvider.js';
import { useReferenced, useResource } from '../provider/hooks.js';

export interface ResourceAvatarProps extends Omit<AvatarProps, 'src' | 'alt'> {
  value?: Resource | Reference | string;
}

/** Initials or photo (Patient.photo, Practitioner.photo) of a resource, with its name as alt text. */
export function ResourceAvatar({ value, ...rest }: ResourceAvatarProps): ReactNode {
  // A reference is resolved with the others on the page (one search per type); a string is read.
  const byString = useResource(typeof value === 'string' ? value : undefined);
  const byReference = useReferenced(typeof value === 'string' ? undefined : value);
  const data = typeof value === 'string' ? byString.data : byReference.data;
  const name: string = data
    ? getDisplayString(data)
    : typeof value === 'object' && 'display' in value && typeof value.display === 'string'
      ? value.display
      : '';
  const client = useHearth();
  const photo = (data?.photo as Attachment[] | undefined)?.find((p) => p.url && p.contentType?.startsWith('image/'));
  const [src, setSrc] = useState<string | undefined>(undefined);
  useEffect(() => {
    const url = photo?.url;
    if (!url || /^(https?:|data:)/.test(url)) {
      setSrc(url);
      return undefined;
    }
    // A Binary on this server ('Binary/123'): fetched with the session's token.
    let objectUrl: string | undefined;
    let live = true;
    client.download(url).then(
      (blob) => {
        if (!live) return;
        objectUrl = URL.createObjectURL(blob);
        setSrc(objectUrl);
      },
      () => live && setSrc(undefined),
    );
    return () => {
      live = false;
      if (objectUrl) URL.revokeObjectURL(objectUrl);
    };
  }, [client, photo?.url]);
  const initials = name
    .split(/\s+/)
    .filter((w: string) => /^[\p{L}\p{N}]/u.test(w))
    .slice(0, 2)
    .map((w: string) => w[0].toUpperCase())
    .join('');
  return (
    <Avatar src={src} alt={name || 'resource'} radius="xl" color="blue.9" variant="filled" {...rest}>
      {initials || '?'}
    </Avatar>
  );
}
