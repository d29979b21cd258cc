import { lazy, type ComponentType, type LazyExoticComponent } from 'react';

/**
 * A page component loaded on first render from a module that exports it by name: each route is a
 * chunk of its own (React.lazy needs a default export; the pages export named components).
 */
export function lazyPage<K extends string>(
  load: () => Promise<Record<K, ComponentType>>,
  name: K,
): LazyExoticComponent<ComponentType> {
  return lazy(async () => ({ default: (await load())[name] }));
}
