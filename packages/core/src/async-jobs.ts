/**
 * Long operations answer 202 with an AsyncJob (hl7.org/fhir/R4/async.html); while one runs, Hearth
 * keeps its progress on the AsyncJob as this extension: a fraction from 0 to 1, a short message,
 * and for work that counts items (a reindex) how many are done of how many.
 */
export const ASYNC_JOB_PROGRESS_EXTENSION = 'https://hearth.dev/fhir/StructureDefinition/async-job-progress';

export interface AsyncJobProgress {
  /** 0 to 1. */
  fraction: number;
  message?: string;
  done?: number;
  total?: number;
}

interface ExtensionLike {
  url?: string;
  valueDecimal?: number;
  valueInteger?: number;
  valueString?: string;
  extension?: ExtensionLike[];
}

/** The progress a running AsyncJob reports, or undefined when it reports none (yet, or any more). */
export function asyncJobProgress(job: { extension?: ExtensionLike[] } | undefined): AsyncJobProgress | undefined {
  const parts = job?.extension?.find((e) => e.url === ASYNC_JOB_PROGRESS_EXTENSION)?.extension;
  if (!parts) {
    return undefined;
  }
  const part = (url: string) => parts.find((p) => p.url === url);
  const done = part('done')?.valueInteger;
  const total = part('total')?.valueInteger;
  const given = part('fraction')?.valueDecimal;
  const fraction = typeof given === 'number' ? given : done !== undefined && total ? done / total : 0;
  return {
    fraction: Math.max(0, Math.min(1, fraction)),
    ...(part('message')?.valueString !== undefined ? { message: part('message')?.valueString } : {}),
    ...(done !== undefined ? { done } : {}),
    ...(total !== undefined ? { total } : {}),
  };
}
