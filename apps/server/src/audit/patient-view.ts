// What a patient sees of the trail: entries about their own record, with the other patients an
// entry names (a search that returned several) and the search text left out.
interface Entity {
  what?: { reference?: string };
  query?: string;
  role?: { code?: string };
}

export function patientView(bundleText: string, patient: string): string {
  const bundle = JSON.parse(bundleText) as {
    entry?: { resource: { entity?: Entity[]; agent?: { network?: unknown; extension?: unknown }[] } }[];
    link?: unknown;
  };
  for (const entry of bundle.entry ?? []) {
    const event = entry.resource;
    event.entity = (event.entity ?? [])
      .filter((e) => !e.what?.reference?.startsWith('Patient/') || e.what.reference === patient)
      .map(({ query: _query, ...rest }) => rest);
    for (const agent of event.agent ?? []) {
      // Where the caller sat and what they ran is the admins' to see.
      delete agent.network;
      delete agent.extension;
    }
  }
  return JSON.stringify(bundle);
}
