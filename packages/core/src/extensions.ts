/** Extensions (hl7.org/fhir/R4/extensibility.html): finding them and reading their values. */
import type { Extension } from '@hearth/fhir-types';

type WithExtensions = { extension?: Extension[] };

/**
 * The extension reached by following `urls`: the first URL on the element, the next one inside
 * that extension (complex extensions), and so on.
 */
export function getExtension(element: WithExtensions | undefined, ...urls: string[]): Extension | undefined {
  let current: WithExtensions | undefined = element;
  let found: Extension | undefined;
  for (const url of urls) {
    found = current?.extension?.find((e) => e.url === url);
    if (!found) {
      return undefined;
    }
    current = found;
  }
  return found;
}

/** The value[x] of an extension, whatever its type: the `valueString`, `valueCoding`, ... it holds. */
export function getExtensionValueOf(extension: Extension | undefined): unknown {
  if (!extension) {
    return undefined;
  }
  for (const [key, value] of Object.entries(extension)) {
    if (key.startsWith('value') && key.length > 5 && value !== undefined) {
      return value;
    }
  }
  return undefined;
}

/** The value of the extension reached by following `urls` (see getExtension). */
export function getExtensionValue(element: WithExtensions | undefined, ...urls: string[]): unknown {
  return getExtensionValueOf(getExtension(element, ...urls));
}

/** Sets (replacing) an extension on an element. Mutates and returns the element. */
export function setExtension<T extends WithExtensions>(element: T, extension: Extension): T {
  element.extension = [...(element.extension ?? []).filter((e) => e.url !== extension.url), extension];
  return element;
}
