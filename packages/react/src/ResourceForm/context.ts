import { createContext, useContext } from 'react';
import type { UiMetadata } from '../provider/metadata.js';

export interface FormContextValue {
  metadata: UiMetadata;
  /** Error messages by element expression ('name[0].family'). */
  issues: Map<string, string[]>;
}

export const FormContext = createContext<FormContextValue | undefined>(undefined);

export function useFormContext(): FormContextValue {
  const value = useContext(FormContext);
  if (!value) {
    throw new Error('Form inputs must be inside a ResourceForm');
  }
  return value;
}

/** Elements a generated form leaves out: server-owned, narrative, and extension machinery. */
export const HIDDEN_ELEMENTS = new Set([
  'id',
  'meta',
  'implicitRules',
  'text',
  'contained',
  'extension',
  'modifierExtension',
]);

/** Past this depth a form offers JSON instead of more nested fields (recursive types never end). */
export const MAX_DEPTH = 6;
