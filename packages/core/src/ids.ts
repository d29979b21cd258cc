/** Resource ids: hl7.org/fhir/R4/datatypes.html#id */
export const ID_PATTERN = /^[A-Za-z0-9\-.]{1,64}$/;

export function isValidId(id: unknown): id is string {
  return typeof id === 'string' && ID_PATTERN.test(id);
}

/** A new server-assigned id (a random UUID). */
export function generateId(): string {
  return globalThis.crypto.randomUUID();
}

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export function isUUID(value: unknown): value is string {
  return typeof value === 'string' && UUID_PATTERN.test(value);
}
