/**
 * What the patient summary shows, fetched in one batch Bundle (hl7.org/fhir/R4/http.html#transaction):
 * active problems and medications, allergies, vital sign and lab trends, recent encounters,
 * upcoming appointments, active care teams, open tasks, and the record's counts.
 */
import type { Bundle, HearthClient, Observation, Resource } from '@hearth/core';

export interface SummaryData {
  problems: Resource[];
  medications: Resource[];
  allergies: Resource[];
  vitals: Observation[];
  labs: Observation[];
  encounters: Resource[];
  appointments: Resource[];
  careTeams: Resource[];
  tasks: Resource[];
  counts: { conditions: number; medications: number; observations: number; encounters: number };
}

/** Task states that still need doing (hl7.org/fhir/R4/valueset-task-status.html). */
const OPEN_TASK = 'draft,requested,received,accepted,ready,in-progress,on-hold';
/** Appointment states that still lie ahead (hl7.org/fhir/R4/valueset-appointmentstatus.html). */
const UPCOMING = 'proposed,pending,booked,arrived,checked-in,waitlist';

export async function loadSummary(client: HearthClient, patientId: string, now = new Date()): Promise<SummaryData> {
  const ref = `Patient/${patientId}`;
  const today = now.toISOString().slice(0, 10);
  const searches = [
    `Condition?patient=${ref}&clinical-status=active&_count=100`,
    `MedicationRequest?patient=${ref}&status=active&_count=100`,
    `AllergyIntolerance?patient=${ref}&_count=50`,
    `Observation?subject=${ref}&category=vital-signs&_sort=-date&_count=500`,
    `Observation?subject=${ref}&category=laboratory&_sort=-date&_count=500`,
    `Encounter?patient=${ref}&_sort=-date&_count=10`,
    `Appointment?patient=${ref}&date=ge${today}&status=${UPCOMING}&_sort=date&_count=10`,
    `CareTeam?patient=${ref}&status=active&_count=10`,
    `Task?patient=${ref}&status=${OPEN_TASK}&_count=20`,
    `Condition?patient=${ref}&_summary=count`,
    `MedicationRequest?patient=${ref}&_summary=count`,
    `Observation?subject=${ref}&_summary=count`,
    `Encounter?patient=${ref}&_summary=count`,
  ];
  const response = await client.executeBatch({
    resourceType: 'Bundle',
    type: 'batch',
    entry: searches.map((url) => ({ request: { method: 'GET', url } })),
  });
  const bundles = (response.entry ?? []).map((e) => e.resource as Bundle | undefined);
  const list = (i: number) =>
    (bundles[i]?.entry ?? [])
      .filter((e) => e.search?.mode !== 'include')
      .map((e) => e.resource as Resource)
      .filter(Boolean);
  const total = (i: number) => bundles[i]?.total ?? 0;
  return {
    problems: list(0),
    medications: list(1),
    allergies: list(2),
    vitals: list(3) as unknown as Observation[],
    labs: list(4) as unknown as Observation[],
    encounters: list(5),
    appointments: list(6),
    careTeams: list(7),
    tasks: list(8),
    counts: { conditions: total(9), medications: total(10), observations: total(11), encounters: total(12) },
  };
}

/** The newest result of each code, newest first (the searches come sorted by date, descending). */
export function latestByCode(observations: Observation[], limit = 12): Observation[] {
  const seen = new Set<string>();
  const out: Observation[] = [];
  for (const o of observations) {
    const c = o.code?.coding?.[0];
    const key = c ? `${c.system}|${c.code}` : (o.code?.text ?? '');
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(o);
    if (out.length === limit) break;
  }
  return out;
}
