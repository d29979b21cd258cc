// @vitest-environment jsdom
import { act, renderHook } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { useFields } from './use-fields.js';

describe('useFields', () => {
  it('binds a text input and a checkbox to their values', () => {
    const { result } = renderHook(() => useFields({ name: '', admin: false }));
    expect(result.current.text('name').value).toBe('');
    act(() => result.current.text('name').onChange({ currentTarget: { value: 'Ada' } }));
    act(() => result.current.checkbox('admin').onChange({ currentTarget: { checked: true } }));
    expect(result.current.values).toEqual({ name: 'Ada', admin: true });
    expect(result.current.checkbox('admin').checked).toBe(true);
  });

  it('keeps every change when two come before a render', () => {
    const { result } = renderHook(() => useFields({ first: '', last: '' }));
    act(() => {
      result.current.text('first').onChange({ currentTarget: { value: 'Ada' } });
      result.current.text('last').onChange({ currentTarget: { value: 'Lovelace' } });
    });
    expect(result.current.values).toEqual({ first: 'Ada', last: 'Lovelace' });
  });

  it('replaces every value at once', () => {
    const { result } = renderHook(() => useFields({ name: 'Ada' }));
    act(() => result.current.setValues({ name: '' }));
    expect(result.current.values.name).toBe('');
  });
});
