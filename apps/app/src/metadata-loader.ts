import type { UiMetadataSource } from '@hearth/react';
import { loadBase, loadType } from 'virtual:hearth-metadata';

/** The type schema in parts (built by vite.config.ts): the data types first, each resource type when used. */
export const metadataLoader: UiMetadataSource = { loadBase, loadType };
