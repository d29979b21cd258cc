// @vitest-environment jsdom
import { act, renderHook } from '@testing-library/react';
import type { FormEvent } from 'react';
import { describe, expect, it } from 'vitest';
import { useAction } from './use-action.js';

describe('useAction', () => {
  it('is busy while the work runs, then not', async () => {
    const { result } = renderHook(() => useAction());
    let finish!: () => void;
    let running!: Promise<void>;
    act(() => {
      running = result.current.run(() => new Promise<void>((resolve) => (finish = resolve)));
    });
    expect(result.current.busy).toBe(true);
    await act(async () => {
      finish();
      await running;
    });
    expect(result.current.busy).toBe(false);
    expect(result.current.error).toBeUndefined();
  });

  it('keeps a failure as the error instead of throwing, and clears it on the next run', async () => {
    const { result } = renderHook(() => useAction());
    const failure = new Error('refused');
    await act(() => result.current.run(() => Promise.reject(failure)));
    expect(result.current.error).toBe(failure);
    expect(result.current.busy).toBe(false);
    await act(() => result.current.run(() => Promise.resolve()));
    expect(result.current.error).toBeUndefined();
  });

  it('submits a form without the browser submitting it, then runs the work', async () => {
    const { result } = renderHook(() => useAction());
    let prevented = false;
    let ran = false;
    const event = { preventDefault: () => (prevented = true) } as unknown as FormEvent;
    await act(() =>
      result.current.submit(async () => {
        ran = true;
      })(event),
    );
    expect(prevented).toBe(true);
    expect(ran).toBe(true);
    expect(result.current.busy).toBe(false);
  });
});
