/**
 * SMART standalone launch/encounter (App Launch 2.0, scopes-and-launch-context): once the patient
 * is known, the browser sign-in asks which of their encounters the app works in, newest first, or
 * none (the spec lets the encounter context be absent). Encounters are searched as the member, so
 * their access policy decides what is offered; only the project signed into counts.
 */
import type { FastifyReply } from 'fastify';
import { badRequest, fail, isValidId, OperationOutcomeError, type Resource } from '@hearth/core';
import type { RequestAuth } from '../authenticate.js';
import { withChosenContext } from '../launch-pick.js';
import type { AuthModule } from '../module.js';
import { launchPatient } from '../tokens.js';
import { searchAsMember } from './member-search.js';
import { CHOSEN_CONTEXT_EXTENSION, loginExtension, type Login } from '../types.js';
import { CARRIED, displayName, escapeHtml, hidden, page, sendHtml, type Fields, type HumanName } from './pages.js';

/** The form value of "No encounter": not a FHIR id, so never taken for an encounter's. */
export const NO_ENCOUNTER = '_none';
const PAGE_SIZE = 20;

interface Coding {
  code?: string;
  display?: string;
}

interface EncounterSummary {
  id: string;
  status?: string;
  class?: Coding;
  type?: { text?: string; coding?: Coding[] }[];
  period?: { start?: string; end?: string };
  meta?: { project?: string };
}

interface SearchBundle {
  entry?: { resource: EncounterSummary }[];
  link?: { relation: string }[];
}

export interface EncounterPicker {
  /** The picker page, from the `offset` form field (a page of the patient's encounters). */
  show(reply: FastifyReply, fields: Fields, login: Login): Promise<FastifyReply>;
  /**
   * Remembers the choice on the login: one of the patient's encounters in the project that the
   * member may read (a SmartAppLaunch with patient and encounter), or NO_ENCOUNTER. Anything else
   * is a 400, whether the encounter does not exist, is hidden, or belongs to someone else.
   */
  choose(login: Login, choice: string): Promise<void>;
}

function encounterLabel(e: EncounterSummary): string {
  const type = e.type?.[0];
  const kind = [type?.text ?? type?.coding?.[0]?.display ?? type?.coding?.[0]?.code, e.class?.display ?? e.class?.code]
    .filter(Boolean)
    .join(', ');
  const when = (t: string | undefined) => t?.replace('T', ' ');
  const { start, end } = e.period ?? {};
  const period =
    start && end ? `${when(start)} – ${when(end)}` : start ? `from ${when(start)}` : end ? `until ${when(end)}` : '';
  return [kind || 'Encounter', e.status, period].filter(Boolean).join(' · ');
}

function parseOffset(value: string | undefined): number {
  if (value === undefined || value === '') {
    return 0;
  }
  if (!/^\d{1,5}$/.test(value)) {
    fail(badRequest('offset must be a whole number', 'offset'));
  }
  return Number(value);
}

/** `actions` is the path the sign-in forms post to (/oauth2/authorize under the server's base path). */
export function encounterPicker(auth: AuthModule, fhirBase: string, actions: string): EncounterPicker {
  const deps = auth.deps;

  async function context(login: Login): Promise<{ member: RequestAuth; patient: string }> {
    const member = await auth.authenticator.forMembership(login.membership?.reference as string);
    const patient = await launchPatient(deps, login, member);
    if (!patient) {
      fail(badRequest('This sign-in has no patient to choose an encounter of', 'login'));
    }
    return { member, patient };
  }

  async function encountersOf(
    member: RequestAuth,
    patient: string,
    extra: Record<string, string>,
  ): Promise<{ encounters: EncounterSummary[]; more: boolean }> {
    const params = new URLSearchParams({
      patient,
      _sort: '-date',
      _count: String(PAGE_SIZE),
      _elements: 'type,class,status,period',
      ...extra,
    });
    const bundle = await searchAsMember<SearchBundle>(auth, member, fhirBase, 'Encounter', params);
    // A member reads linked projects too; the launch context stays in the project signed into.
    const encounters = (bundle.entry ?? []).map((e) => e.resource).filter((e) => e.meta?.project === member.project.id);
    return { encounters, more: bundle.link?.some((l) => l.relation === 'next') ?? false };
  }

  /** The patient's name for the heading, when the member may read it. */
  async function patientName(member: RequestAuth, patient: string): Promise<string | undefined> {
    try {
      const read = await auth.repoFor(member).readResource('Patient', patient.replace(/^Patient\//, ''));
      return displayName((read.resource as Resource & { name?: HumanName[] }).name);
    } catch (err) {
      if (err instanceof OperationOutcomeError && err.status < 500) {
        return undefined;
      }
      throw err;
    }
  }

  return {
    async show(reply, fields, login) {
      const offset = parseOffset(fields.offset);
      const { member, patient } = await context(login);
      const { encounters, more } = await encountersOf(member, patient, offset ? { _offset: String(offset) } : {});
      const name = await patientName(member, patient);
      const carried = hidden({ ...fields, login: login.id }, [...CARRIED, 'login']);
      const choices = encounters
        .map(
          (e, i) =>
            `<label class="choice"><input type="radio" name="encounter" value="${escapeHtml(e.id)}"${i === 0 ? ' checked' : ''}> ${escapeHtml(encounterLabel(e))}</label>`,
        )
        .join('');
      const none = `<label class="choice"><input type="radio" name="encounter" value="${NO_ENCOUNTER}"${choices ? '' : ' checked'}> No encounter</label>`;
      const pageAt = (to: number, label: string) =>
        `<form method="post" action="${actions}/encounter">${carried}<input type="hidden" name="offset" value="${to}"><button type="submit">${label}</button></form>`;
      return sendHtml(
        reply,
        200,
        page(
          'Choose an encounter',
          `<h1>Choose an encounter</h1>${name ? `<p>${escapeHtml(name)}</p>` : ''}
<form method="post" action="${actions}/encounter">${carried}${choices || '<p class="error">No encounters found.</p>'}${none}<button type="submit">Continue</button></form>
${offset > 0 ? pageAt(Math.max(0, offset - PAGE_SIZE), 'Newer encounters') : ''}${more ? pageAt(offset + PAGE_SIZE, 'Older encounters') : ''}`,
        ),
        fields.redirect_uri,
      );
    },

    async choose(login, choice) {
      let launchId: string | undefined;
      if (choice !== NO_ENCOUNTER) {
        if (!isValidId(choice)) {
          fail(badRequest('Invalid encounter', 'encounter'));
        }
        const { member, patient } = await context(login);
        const { encounters } = await encountersOf(member, patient, { _id: choice });
        if (encounters.length === 0) {
          fail(badRequest("Not one of the patient's encounters", 'encounter'));
        }
        const repo = deps.systemRepo(member.project.id as string);
        const chosen = {
          resourceType: 'SmartAppLaunch',
          patient: { reference: patient },
          encounter: { reference: `Encounter/${choice}` },
        } as Resource;
        // The patient picker's launch (this sign-in's own) gains the encounter; else a new launch holds both.
        const picked =
          loginExtension(login, CHOSEN_CONTEXT_EXTENSION) === 'patient' ? login.launch?.reference : undefined;
        const pickedId = picked?.startsWith('SmartAppLaunch/') ? picked.slice('SmartAppLaunch/'.length) : undefined;
        const launch = pickedId
          ? await repo.updateResource({ ...chosen, id: pickedId })
          : await repo.createResource(chosen);
        launchId = launch.resource.id;
      }
      await deps
        .systemRepo()
        .updateResource(withChosenContext(login, 'encounter', launchId), { ifMatch: Number(login.meta?.versionId) });
    },
  };
}
