// Reading ImagingStudy resources (hl7.org/fhir/R4/imagingstudy.html) for display.
import type { ImagingStudy } from '@hearth/core';

export type ImagingSeries = NonNullable<ImagingStudy['series']>[number];
export type ImagingInstance = NonNullable<ImagingSeries['instance']>[number];

/**
 * On ImagingStudy.series.instance: the Binary holding the instance's DICOM Part 10 file. The
 * server's DICOM import (ImagingStudy/$import-dicom, the agent's DICOM channel) sets it.
 */
export const IMAGING_INSTANCE_CONTENT = 'https://hearth.dev/fhir/StructureDefinition/imaging-instance-content';

/** The reference ('Binary/…') of an instance's file, when the server holds it. */
export function instanceBinary(instance: ImagingInstance): string | undefined {
  return instance.extension?.find((e) => e.url === IMAGING_INSTANCE_CONTENT)?.valueReference?.reference;
}

/** The study's Study Instance UID (identifier urn:dicom:uid, value urn:oid:…). */
export function studyInstanceUid(study: ImagingStudy): string | undefined {
  return study.identifier?.find((i) => i.system === 'urn:dicom:uid')?.value?.replace(/^urn:oid:/, '');
}

/** The accession number (identifier of type ACSN). */
export function accessionNumber(study: ImagingStudy): string | undefined {
  return study.identifier?.find((i) => i.type?.coding?.some((c) => c.code === 'ACSN'))?.value;
}

/** The study's modalities: ImagingStudy.modality, else its series'. */
export function studyModalities(study: ImagingStudy): string[] {
  const codes = (study.modality?.length ? study.modality : (study.series ?? []).map((s) => s.modality))
    .map((c) => c?.code)
    .filter((c): c is string => !!c);
  return [...new Set(codes)];
}

/** Series by number, instances by number (DICOM order; those without a number last). */
export function sortedSeries(study: ImagingStudy): ImagingSeries[] {
  const byNumber = <T extends { number?: number }>(a: T, b: T) =>
    (a.number ?? Number.MAX_SAFE_INTEGER) - (b.number ?? Number.MAX_SAFE_INTEGER);
  return [...(study.series ?? [])]
    .sort(byNumber)
    .map((s) => (s.instance ? { ...s, instance: [...s.instance].sort(byNumber) } : s));
}

/** Counts as the study says them, else as counted from its series. */
export function studyCounts(study: ImagingStudy): { series: number; instances: number } {
  const series = study.series ?? [];
  return {
    series: study.numberOfSeries ?? series.length,
    instances:
      study.numberOfInstances ?? series.reduce((n, s) => n + (s.numberOfInstances ?? s.instance?.length ?? 0), 0),
  };
}

export function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}
