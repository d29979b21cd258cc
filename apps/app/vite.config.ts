import react from '@vitejs/plugin-react';
import { fileURLToPath } from 'node:url';
import { defineConfig, type Plugin } from 'vite';
// @ts-expect-error: a plain JavaScript build script without declarations.
import { buildUiMetadata, splitUiMetadata } from '../../packages/react/scripts/metadata.mjs';

interface MetadataParts {
  base: unknown;
  parts: Record<string, unknown>;
}

/**
 * `virtual:hearth-metadata`: a loader of the type schema and search parameters in parts, each a
 * lazily fetched chunk: `virtual:hearth-metadata/base` (data types, the resource type list) and
 * one `virtual:hearth-metadata/type/<Type>` per resource type.
 */
function hearthMetadata(): Plugin {
  const prefix = 'virtual:hearth-metadata';
  let split: MetadataParts | undefined;
  const parts = (): MetadataParts => (split ??= splitUiMetadata(buildUiMetadata()) as MetadataParts);
  // JSON.parse of a string literal is parsed faster by browsers than an object literal.
  const module = (value: unknown) => `export default JSON.parse(${JSON.stringify(JSON.stringify(value))});`;
  return {
    name: 'hearth-metadata',
    resolveId: (source) => (source.startsWith(prefix) ? `\0${source}` : undefined),
    load(resolved) {
      if (!resolved.startsWith(`\0${prefix}`)) return undefined;
      const rest = resolved.slice(prefix.length + 1);
      if (rest === '') {
        const loaders = Object.keys(parts().parts)
          .map((t) => `  ${JSON.stringify(t)}: () => import(${JSON.stringify(`${prefix}/type/${t}`)}),`)
          .join('\n');
        return [
          `export const loadBase = () => import('${prefix}/base').then((m) => m.default);`,
          `const types = {\n${loaders}\n};`,
          'export const loadType = (name) => types[name]?.().then((m) => m.default);',
        ].join('\n');
      }
      if (rest === '/base') return module(parts().base);
      const type = rest.replace(/^\/type\//, '');
      return type in parts().parts ? module(parts().parts[type]) : undefined;
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
