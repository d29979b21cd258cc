// The published eCQM test data (../shared/data/ecqm-r4) as Hearth can store it: shared by the
// eCQM conformance test (measures/ecqm.test.ts) and the measures benchmark (tools/bench/measures.ts).
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const ZONELESS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/;

/** Every zoneless dateTime string given a `Z`, in place. */
function withZones(node: unknown): void {
  if (!node || typeof node !== 'object') return;
  for (const [k, v] of Object.entries(node as Json)) {
    if (typeof v === 'string' && ZONELESS.test(v)) (node as Json)[k] = `${v}Z`;
    else withZones(v);
  }
}

/**
 * Defects of the published test resources that Hearth rightly refuses, repaired in place before
 * loading (nothing else is changed, and none of it is read by the measures' logic):
 * - CMS122 resources carry `text: { status }` without the `div` FHIR requires (Narrative.div 1..1): dropped;
 * - 24 dateTimes/instants have a time but no time zone (R4: "If hours and minutes are specified, a
 *   time zone SHALL be populated"): given `Z`, the zone the engine reads a zoneless time in here;
 * - three CMS122 Encounters lack the required `class`: given `AMB` (ambulatory; CMS122's
 *   encounters are office visits, and the logic selects them by type);
 * - one Encounter.diagnosis.use coding has the bare OID `2.16.840.1.113883.6.96` as its system:
 *   written as the URI `urn:oid:2.16.840.1.113883.6.96`.
 */
export function repairedEcqmBundle<T extends { entry?: unknown[] }>(bundle: T): T {
  for (const e of (bundle.entry ?? []) as Json[]) {
    const r = e.resource as Json;
    if (r.text && !r.text.div) delete r.text;
    withZones(r);
    if (r.resourceType === 'Encounter' && !r.class) {
      r.class = { system: 'http://terminology.hl7.org/CodeSystem/v3-ActCode', code: 'AMB', display: 'ambulatory' };
    }
    for (const d of (r.diagnosis as Json[] | undefined) ?? []) {
      for (const c of (d.use?.coding as Json[] | undefined) ?? []) {
        if (/^\d+(\.\d+)+$/.test(String(c.system))) c.system = `urn:oid:${String(c.system)}`;
      }
    }
  }
  return bundle;
}
