/** The OperationOutcome builders and helpers that the server answers with and the SDK reads. */
import { describe, expect, it } from 'vitest';
import type { OperationOutcome } from './fhir-types.js';
import {
  accepted,
  allOk,
  badRequest,
  conflict,
  created,
  createIssue,
  fail,
  forbidden,
  forbiddenWith,
  getStatus,
  gone,
  isCreated,
  isGone,
  isNotFound,
  isOk,
  isOperationOutcome,
  methodNotAllowed,
  normalizeErrorString,
  notFound,
  notModified,
  operationOutcomeToString,
  OperationOutcomeError,
  preconditionFailed,
  serverError,
  serviceUnavailable,
  tooManyRequests,
  unauthorized,
  unprocessable,
  validationError,
} from './outcome.js';

describe('outcome builders', () => {
  it('name the HTTP status of each kind of result', () => {
    const cases: [OperationOutcome, number, string, string][] = [
      [allOk, 200, 'information', 'informational'],
      [created, 201, 'information', 'informational'],
      [accepted(), 202, 'information', 'informational'],
      [notModified, 304, 'information', 'informational'],
      [badRequest('Bad'), 400, 'error', 'invalid'],
      [validationError('Invalid'), 400, 'error', 'invalid'],
      [unauthorized, 401, 'error', 'login'],
      [forbidden, 403, 'error', 'forbidden'],
      [notFound, 404, 'error', 'not-found'],
      [methodNotAllowed(), 405, 'error', 'not-supported'],
      [conflict('Taken'), 409, 'error', 'conflict'],
      [gone, 410, 'error', 'deleted'],
      [preconditionFailed(), 412, 'error', 'conflict'],
      [unprocessable('No'), 422, 'error', 'business-rule'],
      [tooManyRequests, 429, 'error', 'throttled'],
      [serverError(new Error('db password is hunter2')), 500, 'error', 'exception'],
      [serviceUnavailable('Down'), 503, 'error', 'transient'],
    ];
    for (const [outcome, status, severity, code] of cases) {
      expect(outcome.resourceType).toBe('OperationOutcome');
      expect([getStatus(outcome), outcome.issue[0].severity, outcome.issue[0].code]).toEqual([status, severity, code]);
      expect(isOk(outcome)).toBe(status < 300);
    }
  });

  it('carry the text and the FHIRPath of the element concerned', () => {
    expect(badRequest('Missing name', 'Patient.name').issue[0]).toEqual({
      severity: 'error',
      code: 'invalid',
      details: { text: 'Missing name' },
      expression: ['Patient.name'],
    });
    expect(conflict('Duplicate', 'duplicate').issue[0].code).toBe('duplicate');
    expect(forbiddenWith('Not yours').issue[0].details?.text).toBe('Not yours');
    const issues = [createIssue('required', 'Missing status', 'Observation.status'), createIssue('value', 'Bad code')];
    expect(validationError(issues).issue).toEqual(issues);
    expect(getStatus(validationError(issues))).toBe(400);
  });

  it('never show the message of an unexpected error', () => {
    expect(JSON.stringify(serverError(new Error('db password is hunter2')))).not.toContain('hunter2');
  });

  it('derive a status from the issues of an outcome without a known id', () => {
    const error: OperationOutcome = { resourceType: 'OperationOutcome', issue: [createIssue('processing', 'Failed')] };
    const warning: OperationOutcome = {
      resourceType: 'OperationOutcome',
      issue: [createIssue('informational', 'Fine', undefined, 'warning')],
    };
    expect(getStatus(error)).toBe(400);
    expect(getStatus(warning)).toBe(200);
    expect(isOk(warning)).toBe(true);
  });
});

describe('outcome helpers', () => {
  it('tell outcomes apart', () => {
    expect(isNotFound(notFound)).toBe(true);
    expect(isNotFound(gone)).toBe(false);
    expect(isGone(gone)).toBe(true);
    expect(isCreated(created)).toBe(true);
    expect(isOk(allOk)).toBe(true);
    expect(isOk(badRequest('x'))).toBe(false);
    expect(isOperationOutcome(allOk)).toBe(true);
    expect(isOperationOutcome({ resourceType: 'Patient' })).toBe(false);
    expect(isOperationOutcome(null)).toBe(false);
  });

  it('throw outcomes as errors that keep them and their status', () => {
    const error = (() => {
      try {
        fail(notFound);
      } catch (err) {
        return err;
      }
    })() as OperationOutcomeError;
    expect(error).toBeInstanceOf(OperationOutcomeError);
    expect(error).toBeInstanceOf(Error);
    expect(error.outcome).toBe(notFound);
    expect(error.status).toBe(404);
    expect(error.message).toBe('Not found');
    const cause = new Error('socket closed');
    expect(new OperationOutcomeError(serviceUnavailable('Down'), cause).cause).toBe(cause);
  });

  it('write outcomes and anything thrown as one readable sentence', () => {
    const two: OperationOutcome = {
      resourceType: 'OperationOutcome',
      issue: [
        createIssue('required', 'Missing status', 'Observation.status'),
        { severity: 'error', code: 'value', diagnostics: 'Bad code' },
      ],
    };
    expect(operationOutcomeToString(two)).toBe('Missing status (Observation.status); Bad code');
    expect(operationOutcomeToString({ resourceType: 'OperationOutcome', issue: [] })).toBe('Unknown error');
    expect(normalizeErrorString(new OperationOutcomeError(badRequest('Bad date', 'Patient.birthDate')))).toBe(
      'Bad date (Patient.birthDate)',
    );
    expect(normalizeErrorString(badRequest('Plain outcome'))).toBe('Plain outcome');
    expect(normalizeErrorString(new TypeError('fetch failed'))).toBe('fetch failed');
    expect(normalizeErrorString('just text')).toBe('just text');
    expect(normalizeErrorString({ error: 'invalid_grant', error_description: 'Code expired' })).toBe('Code expired');
    expect(normalizeErrorString({ message: 'Oops' })).toBe('Oops');
    expect(normalizeErrorString({ code: 'ECONNREFUSED' })).toBe('ECONNREFUSED');
    expect(normalizeErrorString({ other: 1 })).toBe('{"other":1}');
    expect(normalizeErrorString(undefined)).toBe('Unknown error');
  });
});
