import type { AuthDeps } from './deps.js';

export interface LoginAuditInput {
  outcome: 'success' | 'failure';
  /** The user when known, else only the email tried. */
  userId?: string;
  /** A client application signing in as itself (client credentials). */
  clientId?: string;
  email?: string;
  projectId?: string;
  remoteAddress?: string;
  userAgent?: string;
  method: string;
  reason?: string;
}

/**
 * Records a sign-in attempt as an AuditEvent (hl7.org/fhir/R4/auditevent.html; DICOM 110114
 * User Authentication, subtype 110122 Login). Stored in the project signed into when it is known
 * (client credentials), else in the super admin project. A failure to record never fails the
 * sign-in itself.
 */
export async function auditLogin(deps: AuthDeps, input: LoginAuditInput): Promise<void> {
  const event = {
    resourceType: 'AuditEvent',
    type: { system: 'http://dicom.nema.org/resources/ontology/DCM', code: '110114', display: 'User Authentication' },
    subtype: [{ system: 'http://dicom.nema.org/resources/ontology/DCM', code: '110122', display: 'Login' }],
    action: 'E',
    recorded: new Date().toISOString(),
    outcome: input.outcome === 'success' ? '0' : '4',
    ...(input.reason ? { outcomeDesc: input.reason } : {}),
    agent: [
      {
        who: input.userId
          ? { reference: `User/${input.userId}`, display: input.email }
          : input.clientId
            ? { reference: `ClientApplication/${input.clientId}`, display: input.email }
            : { display: input.email ?? 'unknown' },
        requestor: true,
        ...(input.remoteAddress
          ? { network: { address: input.remoteAddress, type: '2' } } // 2: an IP address
          : {}),
      },
    ],
    source: {
      observer: { display: deps.config.baseUrl },
      type: [
        { system: 'http://terminology.hl7.org/CodeSystem/security-source-type', code: '3', display: 'Web Server' },
      ],
    },
    entity: [
      { what: { display: input.method }, ...(input.userAgent ? { description: input.userAgent.slice(0, 200) } : {}) },
    ],
  };
  try {
    await deps.systemRepo(input.projectId ?? deps.superAdminProjectId).createResource(event);
  } catch (err) {
    deps.logger.warn({ err }, 'could not record the sign-in AuditEvent');
  }
}
