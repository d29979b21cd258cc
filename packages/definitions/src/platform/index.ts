/**
 * Hearth's platform types, defined here as StructureDefinitions (differentials over
 * DomainResource, or Element for IdentityProvider), with the value sets of their coded elements
 * and the elements the platform adds to Meta. Imported as JSON modules so that a bundler inlines them.
 */
import type { ElementDefinitionJson, StructureDefinitionJson } from '../schema/convert.js';
import AccessPolicy from './AccessPolicy.json' with { type: 'json' };
import Agent from './Agent.json' with { type: 'json' };
import AsyncJob from './AsyncJob.json' with { type: 'json' };
import Bot from './Bot.json' with { type: 'json' };
import BulkDataExport from './BulkDataExport.json' with { type: 'json' };
import ClientApplication from './ClientApplication.json' with { type: 'json' };
import DomainConfiguration from './DomainConfiguration.json' with { type: 'json' };
import IdentityProvider from './IdentityProvider.json' with { type: 'json' };
import JsonWebKey from './JsonWebKey.json' with { type: 'json' };
import Login from './Login.json' with { type: 'json' };
import PasswordChangeRequest from './PasswordChangeRequest.json' with { type: 'json' };
import Project from './Project.json' with { type: 'json' };
import ProjectMembership from './ProjectMembership.json' with { type: 'json' };
import SmartAppLaunch from './SmartAppLaunch.json' with { type: 'json' };
import User from './User.json' with { type: 'json' };
import UserConfiguration from './UserConfiguration.json' with { type: 'json' };
import UserSecurityRequest from './UserSecurityRequest.json' with { type: 'json' };
import ViewDefinition from './ViewDefinition.json' with { type: 'json' };
import metaElements from './meta-elements.json' with { type: 'json' };
import referenceTargets from './reference-targets.json' with { type: 'json' };
import terminology from './terminology.json' with { type: 'json' };

/** Canonical URL base of Hearth's own definitions. */
export const HEARTH_FHIR_BASE = 'https://hearth.dev/fhir';

/** The platform StructureDefinitions: the data types first, since resources use them. */
export const PLATFORM_STRUCTURE_DEFINITIONS = [
  IdentityProvider,
  AccessPolicy,
  Agent,
  AsyncJob,
  Bot,
  BulkDataExport,
  ClientApplication,
  DomainConfiguration,
  JsonWebKey,
  Login,
  PasswordChangeRequest,
  Project,
  ProjectMembership,
  SmartAppLaunch,
  User,
  UserConfiguration,
  UserSecurityRequest,
  ViewDefinition,
] as unknown as StructureDefinitionJson[];

/** Elements the platform adds to Meta: project, author, account, compartment. */
export const PLATFORM_META_ELEMENTS = metaElements.element as ElementDefinitionJson[];

/** CodeSystems and ValueSets of the platform's coded elements. */
export const PLATFORM_TERMINOLOGY = terminology as unknown as { entry: { resource: Record<string, unknown> }[] };

/** Reference targets the platform adds to R4 elements (element path -> StructureDefinition URLs). */
export const PLATFORM_REFERENCE_TARGETS: Record<string, string[]> = referenceTargets.targets;
