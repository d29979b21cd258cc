declare module 'virtual:hearth-metadata' {
  import type { UiMetadata, UiMetadataPart } from '@hearth/react';
  export const loadBase: () => Promise<UiMetadata>;
  export const loadType: (resourceType: string) => Promise<UiMetadataPart> | undefined;
}
