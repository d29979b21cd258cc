/**
 * The values of the plain FHIRPath expressions most search parameters use ('Patient.birthDate',
 * 'Observation.effective', '(Observation.value as Quantity)', unions of them), without the
 * FHIRPath engine: a search result table draws at once, and the engine (about 2 MB of script)
 * is fetched only for the expressions this does not cover.
 */

const PART =
  /^\(?\s*([A-Z][A-Za-z]*)((?:\.[a-z][A-Za-z0-9]*)+)\s*(?:\bas\s+([A-Za-z]+)\s*)?\)?(?:\.ofType\(([A-Za-z]+)\))?$/;

/** The values, or undefined when the expression is more than paths ('where()', 'resolve()', ...). */
export function evalSimplePath(expression: string, resource: { resourceType: string }): unknown[] | undefined {
  const out: unknown[] = [];
  for (const raw of expression.split('|')) {
    const match = PART.exec(raw.trim());
    if (!match) return undefined;
    const [, type, path, asType, ofType] = match;
    if (type !== resource.resourceType) continue;
    const names = path.slice(1).split('.');
    const wantedType = asType ?? ofType;
    let values: unknown[] = [resource];
    names.forEach((name, i) => {
      const last = i === names.length - 1;
      values = values.flatMap((v) => child(v, name, last ? wantedType : undefined));
    });
    out.push(...values);
  }
  return out;
}

/** An element's values: a plain property, or a choice element ('effective' → 'effectiveDateTime'). */
function child(value: unknown, name: string, type: string | undefined): unknown[] {
  if (!value || typeof value !== 'object') return [];
  const object = value as Record<string, unknown>;
  let found: unknown;
  if (type) {
    found = object[name + type.charAt(0).toUpperCase() + type.slice(1)] ?? (name in object ? object[name] : undefined);
  } else if (name in object) {
    found = object[name];
  } else {
    const key = Object.keys(object).find((k) => k.startsWith(name) && /^[A-Z]/.test(k.slice(name.length)));
    found = key ? object[key] : undefined;
  }
  if (found === undefined || found === null) return [];
  return Array.isArray(found) ? found : [found];
}
