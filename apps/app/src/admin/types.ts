import type { Bot, ClientApplication, Project, Reference } from '@hearth/core';

/** GET /admin/projects/{projectId}: the project, its members, clients and bots. */
export interface ProjectAdminDetails {
  project: Project;
  members: {
    id: string;
    user?: Reference;
    profile?: Reference;
    admin?: boolean;
    active?: boolean;
    invited?: boolean;
    accessPolicy?: Reference;
    /** Policies with parameters (ProjectMembership.access). */
    access?: { policy?: Reference }[];
  }[];
  clients: ClientApplication[];
  bots: Bot[];
}
