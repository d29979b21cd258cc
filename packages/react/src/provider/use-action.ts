import { useCallback, useState, type FormEvent } from 'react';

/** A user-started action's state: whether it is running and why it last failed. */
export interface ActionState {
  busy: boolean;
  error: unknown;
  setError: (error: unknown) => void;
  /** Runs `work` with busy set and the last error cleared; a throw becomes `error` instead of escaping. */
  run: (work: () => Promise<void>) => Promise<void>;
  /** A form's onSubmit handler: keeps the browser from submitting the form, then runs `work` as `run` does. */
  submit: (work: () => Promise<void>) => (event: FormEvent) => Promise<void>;
}

/** The busy / error / try block every form that calls the server needs, once. */
export function useAction(): ActionState {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const run = useCallback(async (work: () => Promise<void>) => {
    setBusy(true);
    setError(undefined);
    try {
      await work();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }, []);
  const submit = useCallback(
    (work: () => Promise<void>) => async (event: FormEvent) => {
      event.preventDefault();
      await run(work);
    },
    [run],
  );
  return { busy, error, setError, run, submit };
}
