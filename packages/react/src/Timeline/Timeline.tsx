import { Timeline as MantineTimeline, Text } from '@mantine/core';
import { formatDateTime, getDisplayString, type Resource } from '@hearth/core';
import type { KeyboardEvent, ReactNode } from 'react';

export interface TimelineItem {
  /** When it happened (FHIR dateTime). */
  date?: string;
  title: ReactNode;
  body?: ReactNode;
  resource?: Resource;
}

export interface TimelineProps {
  items: TimelineItem[];
  onClick?: (item: TimelineItem) => void;
  'aria-label'?: string;
}

/** Events newest first, each with its time. */
export function Timeline({ items, onClick, ...rest }: TimelineProps): ReactNode {
  const sorted = [...items].sort((a, b) => (b.date ?? '').localeCompare(a.date ?? ''));
  if (!sorted.length) {
    return <Text c="dimmed">Nothing yet.</Text>;
  }
  return (
    <MantineTimeline bulletSize={14} lineWidth={2} aria-label={rest['aria-label'] ?? 'Timeline'}>
      {sorted.map((item, i) => (
        <MantineTimeline.Item
          key={i}
          title={item.title}
          // Clickable items are buttons: reachable with Tab, opened with Enter or Space.
          {...(onClick
            ? {
                role: 'button',
                tabIndex: 0,
                onClick: () => onClick(item),
                onKeyDown: (e: KeyboardEvent) => {
                  if (e.key === 'Enter' || e.key === ' ') {
                    e.preventDefault();
                    onClick(item);
                  }
                },
                style: { cursor: 'pointer' },
              }
            : {})}
        >
          {item.body}
          <Text size="xs" c="dimmed">
            {item.date ? formatDateTime(item.date) : 'No date'}
          </Text>
        </MantineTimeline.Item>
      ))}
    </MantineTimeline>
  );
}

/** Timeline items for resources, dated by the first of the given elements that has a value. */
export function resourcesToTimeline(
  resources: Resource[],
  dateElements: string[] = ['period', 'effectiveDateTime', 'authoredOn', 'recordedDate', 'onsetDateTime', 'date'],
): TimelineItem[] {
  return resources.map((resource) => {
    let date: string | undefined;
    for (const key of dateElements) {
      const v = resource[key] as string | { start?: string } | undefined;
      date = typeof v === 'string' ? v : v?.start;
      if (date) break;
    }
    return { date: date ?? resource.meta?.lastUpdated, title: getDisplayString(resource), resource };
  });
}
