import { useState } from 'react';

type FieldValues = Record<string, string | boolean>;
/** The keys of `T` whose values are `V`. */
type KeysOf<T, V> = { [K in keyof T]: T[K] extends V ? K : never }[keyof T];

/** A form's values, and the props that bind one input to one of them. */
export interface Fields<T extends FieldValues> {
  values: T;
  setValues: (values: T) => void;
  /** `value` and `onChange` for a text input (TextInput, PasswordInput). */
  text: (key: KeysOf<T, string>) => { value: string; onChange: (e: { currentTarget: { value: string } }) => void };
  /** `checked` and `onChange` for a Checkbox or a Switch. */
  checkbox: (key: KeysOf<T, boolean>) => {
    checked: boolean;
    onChange: (e: { currentTarget: { checked: boolean } }) => void;
  };
}

/** The state of a form of text fields and checkboxes, with the binding each input repeats once. */
export function useFields<T extends FieldValues>(initial: T): Fields<T> {
  const [values, setValues] = useState(initial);
  // The event's target is read at once: React clears currentTarget once the handler returns.
  const set = (key: keyof T, value: string | boolean) => setValues((v) => ({ ...v, [key]: value }));
  return {
    values,
    setValues,
    text: (key) => ({ value: values[key] as string, onChange: (e) => set(key, e.currentTarget.value) }),
    checkbox: (key) => ({ checked: values[key] as boolean, onChange: (e) => set(key, e.currentTarget.checked) }),
  };
}
