/**
 * The FHIRPath engine for the few search parameter expressions simple-path.ts does not cover,
 * fetched on first use (with its R4 model it is most of a megabyte of script, which the first
 * load of the app should not carry).
 */
export type FhirPathEngine = (expression: string, resource: unknown) => unknown[];

export async function loadFhirPathEngine(): Promise<FhirPathEngine> {
  const [{ default: fhirpath }, { default: r4Model }] = await Promise.all([
    import('fhirpath'),
    import('fhirpath/fhir-context/r4/index.js'),
  ]);
  return (expression, resource) =>
    fhirpath.evaluate(resource as object, expression, undefined, r4Model, { resolveInternalTypes: true }) as unknown[];
}
