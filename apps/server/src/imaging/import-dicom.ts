// One DICOM instance into Hearth: its Part 10 file as a Binary, indexed into the ImagingStudy of
// its study, in one transaction. Idempotent: an instance the study already holds is not stored
// again. Two instances of one study at once take turns on the study's condition lock
// (storage/conditional.ts: findMatches inside a transaction), so neither overwrites the other.
import { randomUUID } from 'node:crypto';
import type { ImagingStudy, Reference } from '@hearth/core';
import type { BinaryStore } from '../storage/binary-store.js';
import { withStorageKey } from '../storage/binary-key.js';
import type { Repository } from '../storage/repository.js';
import { readDicomInstance, type DicomInstanceSummary } from './dicom-file.js';
import { findInstance, instanceContent, studyIdentifierQuery, withInstance } from './imaging-study.js';

export const DICOM_CONTENT_TYPE = 'application/dicom';

export interface DicomImportResult {
  study: ImagingStudy;
  /** `Binary/{id}` holding the instance's file. */
  binary: string;
  /** False when the study already held this SOP instance (nothing was written). */
  added: boolean;
  /** True when this instance created the study. */
  studyCreated: boolean;
  instance: DicomInstanceSummary;
}

/** The patient named by the file's PatientID: the one Patient with that identifier, else a logical reference. */
async function patientReference(tx: Repository, summary: DicomInstanceSummary): Promise<Reference> {
  const display = summary.patientName;
  if (!summary.patientId) return { display: display ?? 'Unknown patient' };
  // Search value escaping (hl7.org/fhir/R4/search.html#escaping): a PatientID may hold , | $ or \.
  const value = summary.patientId.replace(/[\\,|$]/g, '\\$&');
  const ids = await tx.findMatches('Patient', `identifier=${encodeURIComponent(value)}`, 2);
  const identifier = { value: summary.patientId };
  // Several patients with that identifier value: linking either would be a guess.
  if (ids.length === 1) return { reference: `Patient/${ids[0]}`, identifier, ...(display ? { display } : {}) };
  return { identifier, ...(display ? { display } : {}) };
}

export async function importDicomInstance(
  repo: Repository,
  store: BinaryStore,
  bytes: Buffer,
): Promise<DicomImportResult> {
  const summary = readDicomInstance(bytes);
  // The content goes in before the rows that name it; when the rows are not written it is removed again.
  const { key } = await store.write(bytes);
  let keep = false;
  try {
    const result = await repo.withTransaction(async (tx) => {
      const [studyId] = await tx.findMatches('ImagingStudy', studyIdentifierQuery(summary.studyInstanceUid), 1);
      const current = studyId ? (await tx.readResource<ImagingStudy>('ImagingStudy', studyId)).resource : undefined;
      const existing = current && findInstance(current, summary);
      if (current && existing) {
        return {
          study: current,
          binary: instanceContent(existing) ?? '',
          added: false,
          studyCreated: false,
          instance: summary,
        };
      }
      const binaryId = randomUUID();
      const study = withInstance(current, summary, await patientReference(tx, summary), binaryId);
      const written = current
        ? await tx.updateResource(study)
        : await tx.updateResource({ ...study, id: randomUUID() }); // its id is known before the Binary names it
      // Access to the file follows access to its study (hl7.org/fhir/R4/binary.html#security).
      await tx.updateResource(
        withStorageKey(
          {
            resourceType: 'Binary',
            id: binaryId,
            contentType: DICOM_CONTENT_TYPE,
            securityContext: { reference: `ImagingStudy/${written.resource.id}` },
          },
          key,
        ),
      );
      return {
        study: written.resource,
        binary: `Binary/${binaryId}`,
        added: true,
        studyCreated: !current,
        instance: summary,
      };
    });
    keep = result.added;
    return result;
  } finally {
    if (!keep) await store.remove(key);
  }
}
