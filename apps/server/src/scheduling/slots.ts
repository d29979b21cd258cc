// Reading and writing Slots for the scheduling operations: the Slots of a schedule in a window,
// and status changes that are version-checked so two bookings of one slot cannot both land.
import { conflict, fail, OperationOutcomeError, type Resource } from '@hearth/core';
import type { Repository } from '../storage/repository.js';

export interface SlotResource extends Resource {
  resourceType: 'Slot';
  id: string;
  schedule: { reference: string };
  status: 'busy' | 'free' | 'busy-unavailable' | 'busy-tentative' | 'entered-in-error';
  start: string;
  end: string;
  comment?: string;
  serviceType?: unknown[];
  specialty?: unknown[];
  meta?: Resource['meta'];
}

/** The tag of Slots made by Schedule/$generate-slots: only these does a later run change or remove. */
export const GENERATED_SLOT_TAG = { system: 'https://hearth.dev/fhir/CodeSystem/slot-origin', code: 'availability' };

export function isGenerated(slot: SlotResource): boolean {
  return (slot.meta?.tag ?? []).some(
    (t) => t.system === GENERATED_SLOT_TAG.system && t.code === GENERATED_SLOT_TAG.code,
  );
}

/** Most Slots one generation run may read or make: a year of 10-minute slots, 10 hours a day, 6 days a week. */
export const MAX_SLOTS_PER_RUN = 20_000;

/** The Slots of a schedule starting in [from, to), read through `repo` (its access rules apply). */
export async function slotsOfSchedule(
  repo: Repository,
  scheduleId: string,
  from: number,
  to: number,
): Promise<{ slot: SlotResource; versionId: number }[]> {
  const query = new URLSearchParams({ schedule: `Schedule/${scheduleId}` });
  query.append('start', `ge${new Date(from).toISOString()}`);
  query.append('start', `lt${new Date(to).toISOString()}`);
  const ids = await repo.findMatches('Slot', query.toString(), MAX_SLOTS_PER_RUN + 1);
  if (ids.length > MAX_SLOTS_PER_RUN) {
    fail(conflict(`Schedule/${scheduleId} has more than ${MAX_SLOTS_PER_RUN} slots in this window: use a shorter one`));
  }
  const rows = await repo.readResources('Slot', ids);
  return rows.map((r) => ({ slot: r.resource as SlotResource, versionId: r.versionId }));
}

/**
 * Writes a Slot only if it is still at `versionId` (the row is locked while checked). A newer
 * version means another request changed it first: a 409 saying `taken` instead of the 412.
 */
export async function writeSlotAt(
  repo: Repository,
  slot: SlotResource,
  versionId: number,
  taken: string,
): Promise<SlotResource> {
  const { meta: _meta, ...rest } = slot;
  const tag = slot.meta?.tag;
  try {
    const written = await repo.updateResource({ ...rest, ...(tag ? { meta: { tag } } : {}) } as SlotResource, {
      ifMatch: versionId,
    });
    return written.resource;
  } catch (e) {
    if (e instanceof OperationOutcomeError && e.status === 412) fail(conflict(taken, 'conflict', 'Slot.status'));
    throw e;
  }
}

/** Appointment statuses that hold their slots. */
export const HOLDING_STATUSES = ['proposed', 'pending', 'booked', 'arrived', 'checked-in', 'waitlist'];

/**
 * Frees the busy Slots of an appointment that is cancelled or moved (inside its transaction).
 * A slot another active appointment holds stays busy: an appointment written by hand that names
 * someone else's slot cannot free it. Slots deleted or no longer busy are left as they are.
 */
export async function freeSlots(server: Repository, slotIds: string[], appointmentId: string): Promise<void> {
  for (const id of slotIds) {
    const [row] = await server.readResources('Slot', [id]);
    const slot = row?.resource as SlotResource | undefined;
    if (!slot || slot.status !== 'busy') continue;
    const query = new URLSearchParams({ slot: `Slot/${id}`, status: HOLDING_STATUSES.join(',') });
    const holders = await server.findMatches('Appointment', query.toString(), 2);
    if (holders.some((h) => h !== appointmentId)) continue;
    await writeSlotAt(server, { ...slot, status: 'free' }, row.versionId, `Slot/${id} changed meanwhile; try again`);
  }
}
