declare module 'virtual:hearth-metadata' {
  import type { UiMetadata } from '@hearth/react';
  const metadata: UiMetadata;
  export default metadata;
}
