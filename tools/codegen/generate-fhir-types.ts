// Writes packages/fhir-types/src: `npm run generate -w @hearth/fhir-types`.
import { generateFhirTypes } from './fhir-types.js';

const { files, resourceTypes } = await generateFhirTypes();
console.log(`fhir-types: ${files} files, ${resourceTypes} resource types`);
