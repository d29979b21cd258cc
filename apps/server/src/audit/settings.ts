// Per-project settings of the trail, read from Project.setting (the caller's session already
// holds its Project, so reading them costs nothing), and whether a project holds patients.
import type { ProjectSetting } from '@hearth/core';
import type { Queryable } from '../platform/postgres.js';
import { AUDIT_MODES, type AuditMode } from './types.js';

export const MODE_SETTING = 'auditMode';
export const RETENTION_SETTING = 'auditRetentionDays';

export interface ProjectLike {
  id?: string;
  setting?: ProjectSetting[];
}

/** The project's explicit mode, if it set a valid one. */
export function explicitMode(project: ProjectLike): AuditMode | undefined {
  const value = project.setting?.find((s) => s.name === MODE_SETTING)?.valueString;
  return AUDIT_MODES.includes(value as AuditMode) ? (value as AuditMode) : undefined;
}

/** Problems with the audit settings of a Project being written (a 400 names them). */
export function settingProblems(project: ProjectLike): { message: string; expression: string }[] {
  const problems: { message: string; expression: string }[] = [];
  (project.setting ?? []).forEach((s, i) => {
    if (s.name === MODE_SETTING && !AUDIT_MODES.includes(s.valueString as AuditMode)) {
      problems.push({
        message: `Project setting ${MODE_SETTING} must be a valueString of ${AUDIT_MODES.join(', ')}`,
        expression: `Project.setting[${i}]`,
      });
    }
    if (s.name === RETENTION_SETTING && !(Number.isInteger(s.valueInteger) && (s.valueInteger as number) >= 1)) {
      problems.push({
        message: `Project setting ${RETENTION_SETTING} must be a valueInteger of at least 1 (days)`,
        expression: `Project.setting[${i}]`,
      });
    }
  });
  return problems;
}

export function retentionDays(project: ProjectLike): number | undefined {
  const value = project.setting?.find((s) => s.name === RETENTION_SETTING)?.valueInteger;
  return Number.isInteger(value) && (value as number) >= 1 ? value : undefined;
}

/**
 * A project "holds patients" when it has ever stored a Patient: one index seek on the Patient
 * partition's primary key (resource_type, project_id, id). Known answers are kept: "yes" for
 * good (a project that held patients keeps their trail), "no" for a short while or until a
 * Patient is written in this process (`patientWritten`).
 */
export class PatientHolders {
  private readonly known = new Map<string, { holds: boolean; until: number }>();

  constructor(
    private readonly db: Queryable,
    private readonly noAnswerMs: number,
  ) {}

  async holdsPatients(projectId: string): Promise<boolean> {
    const cached = this.known.get(projectId);
    if (cached && (cached.holds || cached.until > Date.now())) return cached.holds;
    const result = await this.db.query<{ holds: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM resource WHERE resource_type = 'Patient' AND project_id = $1) AS holds`,
      [projectId],
    );
    const holds = result.rows[0]?.holds === true;
    if (this.known.size > 100_000) this.known.clear();
    this.known.set(projectId, { holds, until: Date.now() + this.noAnswerMs });
    return holds;
  }

  patientWritten(projectId: string): void {
    this.known.set(projectId, { holds: true, until: Infinity });
  }

  /** The mode a project's requests are recorded in: its own setting, else full where patients are. */
  async modeOf(project: ProjectLike): Promise<AuditMode> {
    const own = explicitMode(project);
    if (own) return own;
    if (!project.id) return 'summary';
    return (await this.holdsPatients(project.id)) ? 'full' : 'summary';
  }
}
