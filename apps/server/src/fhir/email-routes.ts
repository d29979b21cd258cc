import type { FastifyInstance } from 'fastify';
import { allOk } from '@hearth/core';
import { sendOutcome } from '../http/fhir-reply.js';
import type { Authenticator } from '../auth/authenticate.js';
import { sendProjectEmail } from '../email/send.js';
import type { Mailer } from '../platform/email.js';

export interface EmailRoutesOptions {
  authenticator: Authenticator;
  mailer: Mailer;
}

/**
 * POST /email/v1/send (also under /api): email from a project admin or a bot, from an address of
 * the project's verified domains (Project.systemSetting emailVerifiedDomains). Answers 200 with an
 * OperationOutcome once the relay accepted it.
 */
export async function emailRoutes(app: FastifyInstance, options: EmailRoutesOptions): Promise<void> {
  for (const prefix of ['', '/api']) {
    app.post(`${prefix}/email/v1/send`, async (request, reply) => {
      const auth = await options.authenticator.require(request);
      await sendProjectEmail(
        options.mailer,
        {
          projectId: auth.project.id as string,
          projectAdmin: auth.projectAdmin,
          profile: auth.profile.reference as string,
          systemSettings: auth.project.systemSetting ?? [],
        },
        request.body,
      );
      return sendOutcome(reply, 200, allOk);
    });
  }
}
