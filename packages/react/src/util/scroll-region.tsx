import { Box } from '@mantine/core';
import type { ReactNode } from 'react';

/**
 * A wide table's frame on a narrow screen: the table scrolls sideways inside it, not the page.
 * Focusable and named, so that keyboard users can scroll it too (WCAG 2.1.1).
 */
export function ScrollRegion({ label, children }: { label: string; children: ReactNode }): ReactNode {
  return (
    <Box
      role="region"
      aria-label={label}
      tabIndex={0}
      style={{ overflowX: 'auto', maxWidth: '100%', position: 'relative' }}
    >
      {children}
    </Box>
  );
}
