import { createIssue, OperationOutcomeError, type IssueType, type OperationOutcome } from '@hearth/core';

/** The error codes of RFC 6749 §5.2 (and RFC 7662/7591 for introspection and registration). */
export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'invalid_scope'
  | 'access_denied'
  | 'invalid_client_metadata'
  | 'invalid_redirect_uri'
  | 'login_required'
  | 'server_error';

const STATUS: Record<OAuthErrorCode, number> = {
  invalid_request: 400,
  invalid_client: 401,
  invalid_grant: 400,
  unauthorized_client: 400,
  unsupported_grant_type: 400,
  invalid_scope: 400,
  access_denied: 403,
  invalid_client_metadata: 400,
  invalid_redirect_uri: 400,
  login_required: 401,
  server_error: 500,
};

const ISSUE: Record<OAuthErrorCode, IssueType> = {
  invalid_request: 'invalid',
  invalid_client: 'login',
  invalid_grant: 'invalid',
  unauthorized_client: 'forbidden',
  unsupported_grant_type: 'not-supported',
  invalid_scope: 'invalid',
  access_denied: 'forbidden',
  invalid_client_metadata: 'invalid',
  invalid_redirect_uri: 'invalid',
  login_required: 'login',
  server_error: 'exception',
};

/**
 * An OAuth 2.0 error. Its body is an OperationOutcome (every error body is one) that also carries
 * the RFC 6749 §5.2 members `error` and `error_description`, so OAuth and SMART clients read it too.
 */
export class OAuthError extends OperationOutcomeError {
  constructor(
    readonly code: OAuthErrorCode,
    readonly description: string,
  ) {
    const outcome = {
      resourceType: 'OperationOutcome',
      issue: [createIssue(ISSUE[code], description)],
      error: code,
      error_description: description,
    } as OperationOutcome;
    super(outcome);
  }

  override get status(): number {
    return STATUS[this.code];
  }
}

export function oauthFail(code: OAuthErrorCode, description: string): never {
  throw new OAuthError(code, description);
}
