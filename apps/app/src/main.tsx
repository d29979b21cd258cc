import '@mantine/core/styles.css';
import { MantineProvider, createTheme } from '@mantine/core';
import { HearthClient } from '@hearth/core';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { BrowserRouter } from 'react-router';
import { App } from './App.js';

const theme = createTheme({ primaryColor: 'orange', defaultRadius: 'sm' });

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
    <MantineProvider theme={theme}>
      <BrowserRouter>
        <App client={client} />
      </BrowserRouter>
    </MantineProvider>
  </StrictMode>,
);
