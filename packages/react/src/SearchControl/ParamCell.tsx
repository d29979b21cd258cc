import { isReference, type Reference, type Resource } from '@hearth/core';
import { useEffect, useState, type ReactNode } from 'react';
import { ResourceBadge } from '../ResourceBadge/ResourceBadge.js';
import { loadFhirPathEngine, type FhirPathEngine } from '../util/fhirpath-lazy.js';
import { formatValue, valuesOf } from '../util/format.js';

/**
 * A search result cell: the values of a search parameter's expression in the resource. References
 * show the names of what they point to (resolved in batches); an expression beyond plain paths
 * waits for the FHIRPath engine, fetched on first need.
 */
export function ParamCell({ resource, expression }: { resource: Resource; expression: string | undefined }): ReactNode {
  const [engine, setEngine] = useState<FhirPathEngine | undefined>(undefined);
  const values = valuesOf(resource, expression, engine);
  const needsEngine = values === undefined;
  useEffect(() => {
    if (!needsEngine) return undefined;
    let live = true;
    loadFhirPathEngine().then((e) => live && setEngine(() => e), console.error);
    return () => {
      live = false;
    };
  }, [needsEngine]);
  if (!values) return null;
  const references = values.filter((v): v is Reference => isReference(v));
  const others = values.filter((v) => !isReference(v));
  return (
    <>
      {references.map((r, i) => (
        <ResourceBadge key={i} value={r} avatar={false} link={false} />
      ))}
      {others.length > 0 && formatValue(others)}
    </>
  );
}
