import type { OptionsFilter } from '@mantine/core';
import { clearButtonProps } from './a11y.js';

/**
 * Props for a Mantine Select or MultiSelect whose options the server finds as the user types: searchable
 * and clearable (with a named clear button), the search text controlled so that the caller can query
 * with it, and the server's answer shown as it is (no second filtering in the browser).
 */
export function serverSearchProps(options: {
  label: string | undefined;
  search: string;
  onSearchChange: (search: string) => void;
  loading: boolean;
  nothingFound: string;
}): {
  searchable: true;
  clearable: true;
  clearButtonProps: ReturnType<typeof clearButtonProps>;
  searchValue: string;
  onSearchChange: (search: string) => void;
  filter: OptionsFilter;
  nothingFoundMessage: string;
} {
  return {
    searchable: true,
    clearable: true,
    clearButtonProps: clearButtonProps(options.label),
    searchValue: options.search,
    onSearchChange: options.onSearchChange,
    filter: ({ options: all }) => all,
    nothingFoundMessage: options.loading ? 'Searching…' : options.nothingFound,
  };
}
