import fhirpath from 'fhirpath';
import r4Model from 'fhirpath/fhir-context/r4/index.js';
import { compilePath, type Evaluator, type TypedValue } from './path-compiler.js';

export type { Evaluator, TypedValue };

/**
 * Compiles a search parameter expression once: the fast path compiler for the common subset,
 * else the fhirpath package (with `resolve() is T` rewritten, since resolve() is asynchronous
 * there). Returns undefined when neither can compile it; such a parameter cannot be indexed.
 */
export function compileExpression(expression: string): Evaluator | undefined {
  const fast = compilePath(expression);
  if (fast) {
    return fast;
  }
  return compileWithFhirpath(expression);
}

function compileWithFhirpath(expression: string): Evaluator | undefined {
  const rewritten = expression.replace(
    /resolve\(\)\s+is\s+([A-Za-z]+)/g,
    (_m, type: string) => `(reference.startsWith('${type}/') or type = '${type}')`,
  );
  let fn: (resource: unknown, env?: Record<string, unknown>) => unknown[];
  try {
    fn = fhirpath.compile(rewritten, r4Model) as unknown as typeof fn;
  } catch {
    return undefined;
  }
  return (context, resource) => {
    const out: TypedValue[] = [];
    for (const node of context) {
      let values: unknown[];
      try {
        values = fn(node.value, { resource, rootResource: resource });
      } catch {
        continue;
      }
      for (const v of values) {
        if (v !== undefined && v !== null) {
          out.push({ value: v });
        }
      }
    }
    return out;
  };
}
