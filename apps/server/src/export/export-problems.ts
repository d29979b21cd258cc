// The non-fatal problems of a Bulk Data export: what the requester asked for but does not get.
// Each becomes one OperationOutcome of the manifest's error files (export.html#response---complete-status);
// the export itself completes. Texts name only types and references the requester gave or can read.
import type { OperationOutcome, OperationOutcomeIssue } from '@hearth/core';

export class ExportProblems {
  private readonly outcomes: OperationOutcome[] = [];
  /** The same issue (a warning repeated on every page or member chunk) is reported once. */
  private readonly seen = new Set<string>();

  /** The OperationOutcomes, in the order the problems were met. */
  get list(): readonly OperationOutcome[] {
    return this.outcomes;
  }

  /** A type named in `_type` that the requester's scopes or access policy do not let them search. */
  typeNotAllowed(type: string): void {
    this.add({
      severity: 'error',
      code: 'forbidden',
      diagnostics: `${type} is not exported: not allowed to search ${type}`,
      expression: ['_type'],
    });
  }

  /** A Group member whose entity is not a reference to a Patient (only Patients' data is exported). */
  memberNotPatient(index: number, reference: string | undefined): void {
    const what = reference ? `the reference ${reference}` : 'no literal reference';
    this.add({
      severity: 'warning',
      code: 'not-supported',
      diagnostics: `Group member ${index + 1} is not exported: its entity has ${what}, not a Patient reference`,
      expression: [`Group.member[${index}].entity`],
    });
  }

  /**
   * A Patient member the requester cannot read: unknown, deleted, or hidden by their access policy
   * (one message for all three, so that it tells nothing they may not read).
   */
  memberNotReadable(index: number, reference: string): void {
    this.add({
      severity: 'error',
      code: 'not-found',
      diagnostics: `Group member ${reference} is not exported: no such Patient, deleted, or not readable`,
      expression: [`Group.member[${index}].entity`],
    });
  }

  /** The issues a search of `type` answered beside its results (lenient handling, reindexing). */
  searchOutcome(type: string, outcome: OperationOutcome): void {
    for (const issue of outcome.issue ?? []) {
      const text = issue.diagnostics ?? issue.details?.text ?? issue.code;
      this.add({ ...issue, diagnostics: `Searching ${type}: ${text}` });
    }
  }

  private add(issue: OperationOutcomeIssue): void {
    const key = JSON.stringify(issue);
    if (this.seen.has(key)) return;
    this.seen.add(key);
    this.outcomes.push({ resourceType: 'OperationOutcome', issue: [issue] });
  }
}
