// ImagingStudy/$import-dicom: a DICOM Part 10 file (POST body, application/dicom) stored as a
// Binary and indexed into its ImagingStudy. The agent's DICOM channel delivers into the same function.
import { badRequest, fail } from '@hearth/core';
import { IMAGING_STUDY_IMPORT_DICOM } from '../operations/definitions/hearth.js';
import { mediaTypeOf } from '../operations/input.js';
import type { OperationRegistry } from '../operations/registry.js';
import type { OperationInput, OperationResult } from '../operations/types.js';
import type { BinaryStore } from '../storage/binary-store.js';
import { DICOM_CONTENT_TYPE, importDicomInstance } from './import-dicom.js';

export function registerImagingOperations(registry: OperationRegistry, deps: { binaryStore: BinaryStore }): void {
  registry.register({
    definition: IMAGING_STUDY_IMPORT_DICOM,
    handler: async (input: OperationInput): Promise<OperationResult> => {
      const media = mediaTypeOf(input);
      if (media !== DICOM_CONTENT_TYPE || !Buffer.isBuffer(input.body)) {
        fail(
          badRequest(
            `$import-dicom takes a DICOM Part 10 file as ${DICOM_CONTENT_TYPE}, not ${media || 'no body'}`,
            'body',
          ),
        );
      }
      const result = await importDicomInstance(input.context.repo, deps.binaryStore, input.body);
      // 201 when the instance was added, 200 when the study already held it.
      return {
        status: result.added ? 201 : 200,
        headers: { location: `${input.context.fhirBase}ImagingStudy/${result.study.id}` },
        json: result.study,
      };
    },
  });
}
