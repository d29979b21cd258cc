/**
 * Props for a Mantine Select's clear button that make it a named, focusable button. Mantine hides
 * it from assistive technology and from Tab, which leaves keyboard users no way to empty a
 * searchable select (deleting the search text does not clear the value).
 */
export function clearButtonProps(label: string | undefined): {
  'aria-label': string;
  'aria-hidden': false;
  tabIndex: 0;
} {
  return { 'aria-label': `Clear ${label ?? 'value'}`, 'aria-hidden': false, tabIndex: 0 };
}
