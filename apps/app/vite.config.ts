import react from '@vitejs/plugin-react';
import { fileURLToPath } from 'node:url';
import { defineConfig, type Plugin } from 'vite';
// @ts-expect-error: a plain JavaScript build script without declarations.
import { buildUiMetadata } from '../../packages/react/scripts/metadata.mjs';

/** `virtual:hearth-metadata`: the type schema and search parameters, as a lazily loaded chunk. */
function hearthMetadata(): Plugin {
  const id = 'virtual:hearth-metadata';
  return {
    name: 'hearth-metadata',
    resolveId: (source) => (source === id ? `\0${id}` : undefined),
    load(resolved) {
      if (resolved !== `\0${id}`) return undefined;
      // JSON.parse of a string literal is parsed faster by browsers than an object literal.
      return `export default JSON.parse(${JSON.stringify(JSON.stringify(buildUiMetadata()))});`;
    },
  };
}

export default defineConfig({
  root: import.meta.dirname,
  plugins: [react(), hearthMetadata()],
  // Workspace packages resolve to their TypeScript sources. (Not through the 'source' export
  // condition: some npm packages, such as @react-aria/focus, publish sources under it that do not build.)
  resolve: {
    alias: {
      '@hearth/core': fileURLToPath(new URL('../../packages/core/src/index.ts', import.meta.url)),
      '@hearth/react': fileURLToPath(new URL('../../packages/react/src/index.ts', import.meta.url)),
    },
  },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    chunkSizeWarningLimit: 2500,
    sourcemap: false,
  },
  server: { port: 3000 },
});
