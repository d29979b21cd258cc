import '@mantine/core/styles.css';
import {
  Anchor,
  MantineProvider,
  createTheme,
  type CSSVariablesResolver,
  type MantineColorsTuple,
} from '@mantine/core';
import { HearthClient } from '@hearth/core';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { BrowserRouter } from 'react-router';
import { App } from './App.js';

// Hearth's orange, darker from shade 6 on than Mantine's, so that white text on buttons and orange
// links on white meet WCAG AA contrast (4.5:1; Mantine's orange.6 gives 2.6:1).
const ember: MantineColorsTuple = [
  '#fff4e6',
  '#ffe8cc',
  '#ffd8a8',
  '#ffc078',
  '#ffa94d',
  '#e8590c',
  '#c2410c',
  '#b13a0b',
  '#9a3412',
  '#7c2d12',
];
const theme = createTheme({
  primaryColor: 'ember',
  colors: { ember },
  defaultRadius: 'sm',
  // Filled buttons and badges take black or white text, whichever contrasts with their colour.
  autoContrast: true,
  // Links are underlined: told apart from the text around them without relying on colour.
  components: { Anchor: Anchor.extend({ defaultProps: { underline: 'always' } }) },
});

/** Text in a colour (light variants, coloured text) dark enough for 4.5:1 on white and on the light tints. */
const DARK_TEXT: Record<string, string> = { green: '#1e6b31', yellow: '#8a4b00', lime: '#4b7a0e', orange: '#a63f08' };

// Secondary details (dimmed) in gray.7: Mantine's gray.6 on white is 3.3:1, under WCAG AA's 4.5:1;
// coloured text and light variants in a dark shade of their colour for the same reason.
const cssVariables: CSSVariablesResolver = (t) => {
  const light: Record<string, string> = { '--mantine-color-dimmed': t.colors.gray[7] };
  for (const name of Object.keys(t.colors)) {
    const text = DARK_TEXT[name] ?? t.colors[name][9];
    light[`--mantine-color-${name}-light-color`] = text;
    light[`--mantine-color-${name}-text`] = text;
  }
  return { variables: {}, light, dark: {} };
};

// The app is served by the server it talks to; in development VITE_HEARTH_BASE_URL points elsewhere.
const baseUrl = (import.meta.env.VITE_HEARTH_BASE_URL as string | undefined) ?? `${window.location.origin}/`;
const client = new HearthClient({
  baseUrl,
  cacheTime: 10_000,
  // A session the server no longer accepts (and cannot be renewed): sign in again, then come back.
  onUnauthenticated: () => {
    if (!window.location.pathname.startsWith('/signin')) {
      window.location.assign(`/signin?next=${encodeURIComponent(window.location.pathname + window.location.search)}`);
    }
  },
});

createRoot(document.getElementById('root') as HTMLElement).render(
  <StrictMode>
    <MantineProvider theme={theme} cssVariablesResolver={cssVariables}>
      <BrowserRouter>
        <App client={client} />
      </BrowserRouter>
    </MantineProvider>
  </StrictMode>,
);
