// Schedule/{id}/$generate-slots: materialises the Slots of the Schedule's availability extension
// (docs/scheduling.md) and keeps them in step with it. One transaction, one run per schedule at
// a time; booked and hand-made slots are never touched.
import { availabilityOf, conflict, fail, generateId, planSlots, unprocessable, type PlannedSlot } from '@hearth/core';
import type { OperationRegistration } from '../operations/registry.js';
import { jsonResult } from '../operations/result.js';
import type { Repository } from '../storage/repository.js';
import { SCHEDULE_GENERATE_SLOTS } from './definitions.js';
import { instantParam, readParameters } from './parameters.js';
import {
  GENERATED_SLOT_TAG,
  isGenerated,
  MAX_SLOTS_PER_RUN,
  slotsOfSchedule,
  writeSlotAt,
  type SlotResource,
} from './slots.js';

const MAX_WINDOW_MS = 366 * 86_400_000;

interface ScheduleResource {
  id: string;
  active?: boolean;
  planningHorizon?: { start?: string; end?: string };
  serviceCategory?: unknown[];
  serviceType?: unknown[];
  specialty?: unknown[];
  extension?: { url?: string }[];
}

export interface GenerateResult {
  created: number;
  updated: number;
  deleted: number;
  unchanged: number;
  skipped: number;
  start: string;
  end: string;
}

/** The window to generate: the parameters, else the planning horizon; never before now. */
function windowOf(schedule: ScheduleResource, start: number | undefined, end: number | undefined, now: number) {
  const horizon = schedule.planningHorizon ?? {};
  const from = Math.max(start ?? (horizon.start ? Date.parse(horizon.start) : now), now);
  const to = end ?? (horizon.end ? Date.parse(horizon.end) : undefined);
  if (to === undefined || Number.isNaN(to)) {
    fail(unprocessable('Give an end, or set Schedule.planningHorizon.end', 'Schedule.planningHorizon.end'));
  }
  if (to <= from) fail(unprocessable('The window to generate ends before it starts (or is in the past)', 'end'));
  if (to - from > MAX_WINDOW_MS) fail(unprocessable('The window to generate may be at most 366 days long', 'end'));
  return { from, to };
}

function slotFor(schedule: ScheduleResource, planned: PlannedSlot): SlotResource {
  return {
    resourceType: 'Slot',
    id: generateId(),
    meta: { tag: [GENERATED_SLOT_TAG] },
    schedule: { reference: `Schedule/${schedule.id}` },
    status: planned.status,
    start: new Date(planned.start).toISOString(),
    end: new Date(planned.end).toISOString(),
    ...(planned.comment ? { comment: planned.comment } : {}),
    ...(schedule.serviceCategory ? { serviceCategory: schedule.serviceCategory } : {}),
    ...(schedule.serviceType ? { serviceType: schedule.serviceType } : {}),
    ...(schedule.specialty ? { specialty: schedule.specialty } : {}),
  } as SlotResource;
}

const keyOf = (start: number, end: number) => `${start}/${end}`;

/** Generates (or brings up to date) the schedule's slots in the window; all writes through `repo`. */
export async function generateSlots(
  repo: Repository,
  scheduleId: string,
  window: { start?: number; end?: number },
  now = Date.now(),
): Promise<GenerateResult> {
  return repo.withTransaction(async (tx) => {
    // One run per schedule at a time, so two runs never both create the same slot.
    await tx.queryable.query(`SELECT pg_advisory_xact_lock(hashtextextended('hearth-generate-slots:' || $1, 0))`, [
      `${tx.scope.projectId}/${scheduleId}`,
    ]);
    const schedule = (await tx.readResource('Schedule', scheduleId)).resource as unknown as ScheduleResource;
    const availability = availabilityOf(schedule as Parameters<typeof availabilityOf>[0]);
    if (!availability) {
      fail(
        unprocessable(
          'Schedule has no availability extension (https://hearth.dev/fhir/StructureDefinition/availability)',
          'Schedule.extension',
        ),
      );
    }
    if (schedule.active === false) fail(unprocessable('Schedule is not active', 'Schedule.active'));
    const { from, to } = windowOf(schedule, window.start, window.end, now);
    const planned = planSlots(availability, from, to);
    if (planned.length > MAX_SLOTS_PER_RUN) {
      fail(unprocessable(`The window would give more than ${MAX_SLOTS_PER_RUN} slots: use a shorter one`, 'end'));
    }
    const existing = await slotsOfSchedule(tx, scheduleId, from, to);
    // Ours to change: generated slots nobody booked. Everything else stays and blocks its time.
    const ours = new Map<string, { slot: SlotResource; versionId: number }>();
    const fixed: [number, number][] = [];
    for (const e of existing) {
      const range: [number, number] = [Date.parse(e.slot.start), Date.parse(e.slot.end)];
      if (isGenerated(e.slot) && (e.slot.status === 'free' || e.slot.status === 'busy-unavailable')) {
        ours.set(keyOf(...range), e);
      } else if (e.slot.status !== 'entered-in-error') {
        fixed.push(range);
      }
    }
    const result: GenerateResult = {
      created: 0,
      updated: 0,
      deleted: 0,
      unchanged: 0,
      skipped: 0,
      start: new Date(from).toISOString(),
      end: new Date(to).toISOString(),
    };
    const toCreate: SlotResource[] = [];
    const changed = 'A slot of this schedule was booked or changed during generation; run it again';
    for (const p of planned) {
      const key = keyOf(p.start, p.end);
      const mine = ours.get(key);
      if (mine) {
        ours.delete(key);
        const { slot, versionId } = mine;
        if (slot.status === p.status && (slot.comment ?? undefined) === p.comment) {
          result.unchanged++;
          continue;
        }
        const { comment: _comment, ...rest } = slot;
        await writeSlotAt(
          tx,
          { ...rest, status: p.status, ...(p.comment ? { comment: p.comment } : {}) } as SlotResource,
          versionId,
          changed,
        );
        result.updated++;
      } else if (fixed.some(([s, e]) => p.start < e && p.end > s)) {
        result.skipped++;
      } else {
        toCreate.push(slotFor(schedule, p));
      }
    }
    // What is left of ours, the rules no longer give: removed, unless booked meanwhile.
    for (const { slot, versionId } of ours.values()) {
      try {
        await tx.deleteResource('Slot', slot.id, { ifMatch: versionId });
      } catch (e) {
        if ((e as { status?: number }).status === 412) fail(conflict(changed));
        throw e;
      }
      result.deleted++;
    }
    if (toCreate.length > 0) await tx.createMany(toCreate);
    result.created = toCreate.length;
    return result;
  });
}

export function generateSlotsOperation(): OperationRegistration {
  return {
    definition: SCHEDULE_GENERATE_SLOTS,
    handler: async (input) => {
      const params = readParameters(input, 'Schedule/$generate-slots', ['start', 'end']);
      const result = await generateSlots(input.context.repo, input.target.id as string, {
        start: instantParam(params, 'start'),
        end: instantParam(params, 'end', true),
      });
      return jsonResult({
        resourceType: 'Parameters',
        parameter: [
          { name: 'created', valueInteger: result.created },
          { name: 'updated', valueInteger: result.updated },
          { name: 'deleted', valueInteger: result.deleted },
          { name: 'unchanged', valueInteger: result.unchanged },
          { name: 'skipped', valueInteger: result.skipped },
          { name: 'start', valueInstant: result.start },
          { name: 'end', valueInstant: result.end },
        ],
      });
    },
  };
}
