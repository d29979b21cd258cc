/**
 * Validation against the profiles stored in a project (StructureDefinitions created through the
 * REST API): `$validate?profile=` and, when the project's setting `enforceProfiles` is true, the
 * `meta.profile`s a written resource declares (hl7.org/fhir/R4/validation.html#profile).
 * Per project, the definitions a profile leads to (its base profiles, extension definitions,
 * type and target profiles) and the value sets of its required bindings are read once and held,
 * with the compiled profiles, until a StructureDefinition or terminology of the project is
 * written (`forget`, told by change notices) or the cache grows old.
 */
import {
  createIssue,
  ProfileValidator,
  type OperationOutcomeIssue,
  type ProfileDefinition,
  type ProfileElement,
  type Resource,
  type ValidatorSchema,
} from '@hearth/core';
import { getSchema } from '@hearth/definitions';
import type { Queryable } from '../platform/postgres.js';
import type { DeclaredProfileCheck } from '../storage/types.js';

export const ENFORCE_PROFILES_SETTING = 'enforceProfiles';

export interface ProfileServiceOptions {
  db: Queryable;
  /** The base type schema (default: @hearth/definitions' R4 + platform schema). */
  schema?: ValidatorSchema;
  /** The codes of a value set as the project sees it; throws or answers undefined when it cannot be expanded. */
  expandValueSet(url: string, projectId: string): Promise<{ system?: string; code: string }[] | undefined>;
  /** How long what was read may be used (HEARTH_CACHE_MAX_AGE_MS). */
  maxAgeMs: number;
}

export interface ProfileService extends DeclaredProfileCheck {
  /** The issues of `resource` against each profile (an unknown profile is an error issue). */
  validate(resource: Resource, profiles: string[], projectId: string): Promise<OperationOutcomeIssue[]>;
  /** Drops what was read for a project, or for all (definitions, value sets or settings changed). */
  forget(projectId?: string): void;
}

interface ProjectProfiles {
  validator: ProfileValidator;
  definitions: Map<string, ProfileDefinition | null>;
  /** 'system|code' and '|code' per value set; null: cannot be expanded. */
  valueSets: Map<string, Set<string> | null>;
  enforce?: boolean;
  loadedAt: number;
}

const CORE_PREFIX = 'http://hl7.org/fhir/StructureDefinition/';
const unversioned = (url: string) => url.split('|')[0];

/** The canonicals and value sets a definition leads to. */
function references(
  definition: ProfileDefinition,
  schema: ValidatorSchema,
): { profiles: string[]; valueSets: string[] } {
  const profiles = new Set<string>();
  const valueSets = new Set<string>();
  const add = (url: string | undefined) => {
    if (url && !(url.startsWith(CORE_PREFIX) && Object.hasOwn(schema.types, url.slice(CORE_PREFIX.length)))) {
      profiles.add(unversioned(url));
    }
  };
  add(definition.baseDefinition);
  const elements: ProfileElement[] = [
    ...(definition.snapshot?.element ?? []),
    ...(definition.differential?.element ?? []),
  ];
  for (const el of elements) {
    for (const t of el.type ?? []) {
      t.profile?.forEach(add);
      t.targetProfile?.forEach(add);
    }
    const vs = el.binding?.valueSet;
    if (el.binding?.strength === 'required' && vs && !Object.hasOwn(schema.valueSets, unversioned(vs))) {
      valueSets.add(unversioned(vs));
    }
  }
  return { profiles: [...profiles], valueSets: [...valueSets] };
}

export function createProfileService(options: ProfileServiceOptions): ProfileService {
  const { db, maxAgeMs } = options;
  const schema = options.schema ?? getSchema();
  const projects = new Map<string, ProjectProfiles>();

  const stateOf = (projectId: string): ProjectProfiles => {
    let state = projects.get(projectId);
    if (!state || Date.now() - state.loadedAt > maxAgeMs) {
      const definitions = new Map<string, ProfileDefinition | null>();
      const valueSets = new Map<string, Set<string> | null>();
      state = {
        definitions,
        valueSets,
        loadedAt: Date.now(),
        validator: new ProfileValidator({
          schema,
          resolve: (url) => definitions.get(unversioned(url)) ?? undefined,
          inValueSet: (url, system, code) => {
            const codes = valueSets.get(unversioned(url));
            return codes ? codes.has(`${system ?? ''}|${code}`) : undefined;
          },
        }),
      };
      projects.set(projectId, state);
    }
    return state;
  };

  const readDefinition = async (projectId: string, url: string): Promise<ProfileDefinition | null> => {
    const { rows } = await db.query<{ content: string }>(
      `SELECT content FROM resource
        WHERE resource_type = 'StructureDefinition' AND project_id = $1 AND NOT deleted
          AND (content::jsonb ->> 'url') = $2
        ORDER BY last_updated DESC LIMIT 1`,
      [projectId, url],
    );
    return rows[0] ? (JSON.parse(rows[0].content) as ProfileDefinition) : null;
  };

  const readValueSet = async (projectId: string, url: string): Promise<Set<string> | null> => {
    try {
      const codes = await options.expandValueSet(url, projectId);
      if (!codes) {
        return null;
      }
      const keys = new Set<string>();
      for (const c of codes) {
        keys.add(`${c.system ?? ''}|${c.code}`);
        keys.add(`|${c.code}`);
      }
      return keys;
    } catch {
      return null; // unknown or too large to hold: its codes are not judged
    }
  };

  /** Reads the definitions `urls` lead to, and their value sets, until nothing new is named. */
  const load = async (state: ProjectProfiles, projectId: string, urls: string[]): Promise<void> => {
    let pending = urls.map(unversioned).filter((u) => !state.definitions.has(u));
    while (pending.length > 0) {
      const next: string[] = [];
      for (const url of pending) {
        if (state.definitions.has(url)) continue;
        const definition = await readDefinition(projectId, url);
        state.definitions.set(url, definition);
        if (!definition) continue;
        const refs = references(definition, schema);
        next.push(...refs.profiles.filter((u) => !state.definitions.has(u)));
        for (const vs of refs.valueSets) {
          if (!state.valueSets.has(vs)) {
            state.valueSets.set(vs, await readValueSet(projectId, vs));
          }
        }
      }
      pending = next;
    }
  };

  const enforced = async (state: ProjectProfiles, projectId: string): Promise<boolean> => {
    if (state.enforce === undefined) {
      const { rows } = await db.query<{ content: string }>(
        `SELECT content FROM resource WHERE resource_type = 'Project' AND id = $1 AND NOT deleted`,
        [projectId],
      );
      const project = rows[0]
        ? (JSON.parse(rows[0].content) as { setting?: { name?: string; valueBoolean?: boolean }[] })
        : undefined;
      state.enforce = (project?.setting ?? []).some(
        (s) => s.name === ENFORCE_PROFILES_SETTING && s.valueBoolean === true,
      );
    }
    return state.enforce;
  };

  const validate = async (resource: Resource, profiles: string[], projectId: string) => {
    const state = stateOf(projectId);
    await load(state, projectId, profiles);
    return profiles.flatMap((url) => state.validator.validate(resource, url));
  };

  return {
    validate,
    enforces: (projectId) => enforced(stateOf(projectId), projectId),
    async check(resource, projectId) {
      const declared = resource.meta?.profile?.filter((p): p is string => typeof p === 'string') ?? [];
      if (declared.length === 0 || !(await enforced(stateOf(projectId), projectId))) {
        return [];
      }
      const issues = await validate(resource, declared, projectId);
      return issues.map((i) =>
        i.code === 'not-found'
          ? createIssue('not-found', `${i.details?.text}: the project enforces declared profiles`, i.expression?.[0])
          : i,
      );
    },
    forget(projectId) {
      if (projectId === undefined) {
        projects.clear();
      } else {
        projects.delete(projectId);
      }
    },
  };
}
