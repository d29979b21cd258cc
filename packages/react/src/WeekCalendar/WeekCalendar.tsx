import { Box, Group, Text, UnstyledButton, VisuallyHidden } from '@mantine/core';
import type { Appointment, Slot } from '@hearth/core';
import { useRef, useState, type CSSProperties, type PointerEvent as ReactPointerEvent, type ReactNode } from 'react';
import { ScrollRegion } from '../util/scroll-region.js';
import {
  appointmentPatient,
  dayLabel,
  hourRange,
  placeEvents,
  STATUS_COLORS,
  STATUS_LABELS,
  timeLabel,
  weekDays,
  type CalendarEvent,
} from './week.js';

export interface WeekCalendarProps {
  /** Local midnight of the Monday shown (startOfWeek). */
  weekStart: Date;
  events: CalendarEvent[];
  /** A free slot was chosen (click or Enter). */
  onSelectSlot?: (slot: Slot) => void;
  /** An appointment was chosen (click or Enter): its details, Move to…, Cancel. */
  onSelectAppointment?: (appointment: Appointment) => void;
  /** An appointment was dragged onto a free slot. */
  onMoveAppointment?: (appointment: Appointment, slot: Slot) => void;
  /** The calendar's accessible name. */
  label?: string;
  locale?: string;
}

const HOUR_PX = 56;
/** Pointer travel (px) before a press on an appointment becomes a drag. */
const DRAG_THRESHOLD = 6;

interface Drag {
  appointment: Appointment;
  pointerId: number;
  x: number;
  y: number;
  moved: boolean;
}

function eventStyle(status: string, kind: CalendarEvent['kind']): CSSProperties {
  const color = STATUS_COLORS[status] ?? 'gray';
  const unavailable = status === 'busy-unavailable';
  return {
    background: unavailable
      ? 'repeating-linear-gradient(135deg, var(--mantine-color-gray-1), var(--mantine-color-gray-1) 6px, var(--mantine-color-gray-3) 6px, var(--mantine-color-gray-3) 12px)'
      : `var(--mantine-color-${color}-${kind === 'appointment' ? 1 : 0})`,
    // Black text: every status's tint keeps a contrast above 7:1 with it (WCAG 1.4.3).
    color: 'var(--mantine-color-black)',
    borderLeft: `4px solid var(--mantine-color-${color}-${kind === 'appointment' ? 7 : 5})`,
    borderRadius: 4,
  };
}

/**
 * A week of slots and appointments as a grid of days by hours, coloured by status. Free slots
 * and appointments are buttons; an appointment can be dragged onto a free slot (pointer events;
 * the keyboard way is onSelectAppointment's "Move to…").
 */
export function WeekCalendar(props: WeekCalendarProps): ReactNode {
  const { weekStart, events, onSelectSlot, onSelectAppointment, onMoveAppointment, locale } = props;
  const days = weekDays(weekStart);
  const hours = hourRange(events);
  const placed = placeEvents(events, weekStart, hours);
  const drag = useRef<Drag | undefined>(undefined);
  const [dragging, setDragging] = useState<{ id: string; dx: number; dy: number } | undefined>();
  const [dropTarget, setDropTarget] = useState<string | undefined>();
  const slotsById = new Map(events.filter((e) => e.kind === 'slot').map((e) => [e.id, e]));

  /** The free slot under the pointer, looking through the dragged element. */
  const freeSlotAt = (x: number, y: number, dragged: HTMLElement): Slot | undefined => {
    const visibility = dragged.style.visibility;
    dragged.style.visibility = 'hidden';
    const under = document.elementFromPoint(x, y)?.closest<HTMLElement>('[data-slot-id]');
    dragged.style.visibility = visibility;
    const found = under ? slotsById.get(under.dataset.slotId as string) : undefined;
    return found?.kind === 'slot' && found.status === 'free' ? found.slot : undefined;
  };

  const pointerHandlers = (appointment: Appointment) =>
    onMoveAppointment
      ? {
          onPointerDown: (e: ReactPointerEvent<HTMLElement>) => {
            if (e.button !== 0) return;
            drag.current = { appointment, pointerId: e.pointerId, x: e.clientX, y: e.clientY, moved: false };
            e.currentTarget.setPointerCapture?.(e.pointerId);
          },
          onPointerMove: (e: ReactPointerEvent<HTMLElement>) => {
            const d = drag.current;
            if (!d || d.pointerId !== e.pointerId) return;
            const dx = e.clientX - d.x;
            const dy = e.clientY - d.y;
            if (!d.moved && Math.hypot(dx, dy) < DRAG_THRESHOLD) return;
            d.moved = true;
            setDragging({ id: appointment.id as string, dx, dy });
            setDropTarget(freeSlotAt(e.clientX, e.clientY, e.currentTarget)?.id);
          },
          onPointerUp: (e: ReactPointerEvent<HTMLElement>) => {
            const d = drag.current;
            if (!d || d.pointerId !== e.pointerId) return;
            const target = d.moved ? freeSlotAt(e.clientX, e.clientY, e.currentTarget) : undefined;
            setDragging(undefined);
            setDropTarget(undefined);
            // Keep `moved` until the click that follows a drag has been ignored.
            setTimeout(() => (drag.current = undefined), 0);
            if (target) onMoveAppointment(d.appointment, target);
          },
          onPointerCancel: () => {
            drag.current = undefined;
            setDragging(undefined);
            setDropTarget(undefined);
          },
        }
      : {};

  return (
    <ScrollRegion label={props.label ?? 'Week calendar'}>
      <Box
        style={{
          display: 'grid',
          gridTemplateColumns: '3.5rem repeat(7, minmax(6.5rem, 1fr))',
          minWidth: 'calc(3.5rem + 7 * 6.5rem)',
        }}
      >
        <div />
        {days.map((d) => (
          <Text key={d.toISOString()} size="sm" fw={600} ta="center" py={4} aria-hidden>
            {d.toLocaleDateString(locale, { weekday: 'short', day: 'numeric', month: 'short' })}
          </Text>
        ))}
        <Box style={{ position: 'relative', height: (hours[1] - hours[0]) * HOUR_PX }} aria-hidden>
          {Array.from({ length: hours[1] - hours[0] }, (_, i) => (
            <Text key={i} size="xs" c="dimmed" style={{ position: 'absolute', top: i * HOUR_PX - 2, right: 6 }}>
              {timeLabel(new Date(2000, 0, 1, hours[0] + i), locale)}
            </Text>
          ))}
        </Box>
        {days.map((d, dayIndex) => (
          <Box
            key={d.toISOString()}
            component="section"
            aria-label={dayLabel(d, locale)}
            style={{
              position: 'relative',
              height: (hours[1] - hours[0]) * HOUR_PX,
              borderLeft: '1px solid var(--mantine-color-gray-3)',
              backgroundImage: `repeating-linear-gradient(to bottom, var(--mantine-color-gray-2) 0, var(--mantine-color-gray-2) 1px, transparent 1px, transparent ${HOUR_PX}px)`,
            }}
          >
            {placed
              .filter((p) => p.day === dayIndex)
              .map(({ event, top, height }) => {
                const time = `${timeLabel(event.start, locale)}–${timeLabel(event.end, locale)}`;
                const status = STATUS_LABELS[event.status] ?? event.status;
                const position: CSSProperties = {
                  position: 'absolute',
                  top: `${top}%`,
                  height: `calc(${height}% - 2px)`,
                  left: 2,
                  right: 2,
                  overflow: 'hidden',
                  padding: '1px 4px',
                  ...eventStyle(event.status, event.kind),
                };
                if (event.kind === 'appointment') {
                  const who = appointmentPatient(event.appointment);
                  const moving = dragging?.id === event.id;
                  return (
                    <UnstyledButton
                      key={event.id}
                      data-appointment-id={event.id}
                      onClick={() => {
                        if (drag.current?.moved) return;
                        onSelectAppointment?.(event.appointment);
                      }}
                      {...pointerHandlers(event.appointment)}
                      style={{
                        ...position,
                        zIndex: moving ? 3 : 2,
                        touchAction: onMoveAppointment ? 'none' : undefined,
                        cursor: onMoveAppointment ? 'grab' : undefined,
                        transform: moving ? `translate(${dragging.dx}px, ${dragging.dy}px)` : undefined,
                        boxShadow: moving ? 'var(--mantine-shadow-md)' : undefined,
                      }}
                    >
                      <Text component="span" display="block" size="xs" fw={600} lh={1.2} truncate>
                        {who}
                      </Text>
                      <Text component="span" display="block" size="xs" lh={1.2} truncate>
                        {time} · {status}
                      </Text>
                      <VisuallyHidden>, {dayLabel(event.start, locale)}</VisuallyHidden>
                    </UnstyledButton>
                  );
                }
                const free = event.status === 'free';
                const content = (
                  <Text component="span" display="block" size="xs" lh={1.2} truncate>
                    {timeLabel(event.start, locale)} {status}
                    {event.slot.comment ? ` · ${event.slot.comment}` : ''}
                  </Text>
                );
                return free ? (
                  <UnstyledButton
                    key={event.id}
                    data-slot-id={event.id}
                    onClick={() => onSelectSlot?.(event.slot)}
                    style={{
                      ...position,
                      outline: dropTarget === event.id ? '2px solid var(--mantine-color-blue-7)' : undefined,
                    }}
                  >
                    {content}
                    <VisuallyHidden> slot, {dayLabel(event.start, locale)}</VisuallyHidden>
                  </UnstyledButton>
                ) : (
                  <Box key={event.id} data-slot-id={event.id} style={position} title={`${status}, ${time}`}>
                    {content}
                  </Box>
                );
              })}
          </Box>
        ))}
      </Box>
    </ScrollRegion>
  );
}

/** The colours' key. */
export function CalendarLegend({ statuses }: { statuses: string[] }): ReactNode {
  return (
    <Group gap="sm" aria-label="Legend" role="list">
      {statuses.map((s) => (
        <Group key={s} gap={4} role="listitem">
          <Box
            w={14}
            h={14}
            style={{ ...eventStyle(s, s === 'free' || s.startsWith('busy') ? 'slot' : 'appointment') }}
            aria-hidden
          />
          <Text size="xs">{STATUS_LABELS[s] ?? s}</Text>
        </Group>
      ))}
    </Group>
  );
}
