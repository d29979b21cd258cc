// Scheduling (docs/scheduling.md): availability on Schedules materialised as Slots, and booking,
// cancelling and moving Appointments on them. Free of HTTP.
import type { OperationRegistry } from '../operations/registry.js';
import type { SearchService } from '../search/service.js';
import type { UpdateRule } from '../storage/types.js';
import { bookOperation } from './book.js';
import { cancelOperation } from './cancel.js';
import { findOperation } from './find.js';
import { generateSlotsOperation } from './generate-slots.js';
import { appointmentReleasesSlots } from './release.js';
import { rescheduleOperation } from './reschedule.js';

/** The storage update rules of scheduling: a cancelled (or no-show, entered-in-error) Appointment frees its Slots. */
export const SCHEDULING_UPDATE_RULES: readonly UpdateRule[] = [appointmentReleasesSlots];

export function registerSchedulingOperations(registry: OperationRegistry, deps: { search: SearchService }): void {
  registry.register(generateSlotsOperation());
  registry.register(findOperation(deps.search));
  registry.register(bookOperation());
  registry.register(cancelOperation());
  registry.register(rescheduleOperation());
}
