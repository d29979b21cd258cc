import { Route, Routes } from 'react-router';
import type { ReactNode } from 'react';
import { BotEditor } from './BotEditor.js';
import { ProjectAdminPage } from './ProjectAdminPage.js';

/**
 * `/admin/*` app routes. Their paths differ from the server's /admin/projects/... API routes, so
 * that a browser opening one gets the app.
 */
export function AdminRoutes(): ReactNode {
  return (
    <Routes>
      <Route path="bots/:id" element={<BotEditor />} />
      <Route path=":tab?" element={<ProjectAdminPage />} />
    </Routes>
  );
}
