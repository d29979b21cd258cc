/**
 * HearthClient: the SDK's one entry point. Sign-in and session (auth.ts), the FHIR interactions
 * (fhir.ts), and here the operations, binaries and project administration.
 */
import type {
  Appointment,
  Attachment,
  Binary,
  Bot,
  ClientApplication,
  MeasureReport,
  OperationOutcome,
  Parameters,
  ProjectMembership,
  ValueSet,
} from '@hearth/fhir-types';
import type { Bundle } from '../fhir-types.js';
import { badRequest, OperationOutcomeError } from '../outcome.js';
import { FhirClient, type AnyResource } from './fhir.js';
import {
  createFhircastEvent,
  type FhircastContextItem,
  type FhircastCurrentContext,
  type FhircastEvent,
  type FhircastEventName,
} from './fhircast.js';
import {
  readTranslateOutput,
  translateParameters,
  type BulkImportManifest,
  type ConceptMapTranslateOutput,
  type ConceptMapTranslateParams,
} from './operations.js';
import { parseJwtPayload } from './pkce.js';
import { isJsonContentType } from './http.js';
import { getXhr, progressStream, toBytes, xhrFetch } from './upload.js';
import type {
  BotIdentifier,
  CreateBinaryOptions,
  CreateBotRequest,
  CreateClientApplicationRequest,
  FindSlotsParams,
  EvaluateMeasureParams,
  GraphQLResponse,
  InviteRequest,
  ProjectMemberUpdate,
  RequestOptions,
  UploadProgress,
  ValueSetExpandParams,
} from './types.js';

/**
 * A client of a Hearth server.
 *
 * ```ts
 * const hearth = new HearthClient({ baseUrl: 'https://hearth.example.org/' });
 * await hearth.signInWithPassword({ email, password });
 * const patient = await hearth.createResource({ resourceType: 'Patient', name: [{ family: 'Smith' }] });
 * const found = await hearth.searchResources('Patient', { name: 'smith' });
 * ```
 *
 * Every method rejects with an {@link OperationOutcomeError} carrying the server's OperationOutcome.
 */
export class HearthClient extends FhirClient {
  /** Runs a GraphQL query (POST [base]/$graphql). */
  graphql<T = Record<string, unknown>>(
    query: string,
    operationName?: string,
    variables?: Record<string, unknown>,
    options?: RequestOptions,
  ): Promise<GraphQLResponse<T>> {
    return this.post(this.fhirUrl('$graphql'), { query, operationName, variables }, 'application/json', options);
  }

  /**
   * Validates a resource on the server ([type]/$validate, hl7.org/fhir/R4/resource-operation-validate.html).
   * Resolves with the OperationOutcome, valid or not: the resource is valid when no issue has
   * severity 'error' or 'fatal'. Rejects only when the request itself fails.
   */
  validateResource(resource: AnyResource, options?: RequestOptions): Promise<OperationOutcome> {
    if (!resource?.resourceType) {
      return Promise.reject(new OperationOutcomeError(badRequest('Missing resourceType', 'resourceType')));
    }
    return this.post(this.fhirUrl(resource.resourceType, '$validate'), resource, undefined, options);
  }

  /** Expands a value set (GET ValueSet/$expand, hl7.org/fhir/R4/valueset-operation-expand.html). */
  valueSetExpand(params: ValueSetExpandParams, options?: RequestOptions): Promise<ValueSet> {
    const query: Record<string, string | number> = {};
    for (const [key, value] of Object.entries(params)) {
      if (value !== undefined && value !== null) {
        query[key] = value as string | number;
      }
    }
    return this.get(this.fhirSearchUrl('ValueSet/$expand', query), options);
  }

  /**
   * Translates a code with a ConceptMap (ConceptMap/$translate, or ConceptMap/{id}/$translate
   * when `params.id` is given) and reads the answer: result, message and matches.
   */
  async translate(params: ConceptMapTranslateParams, options?: RequestOptions): Promise<ConceptMapTranslateOutput> {
    const url = params.id
      ? this.fhirUrl('ConceptMap', params.id, '$translate')
      : this.fhirUrl('ConceptMap', '$translate');
    const output = await this.post<Parameters>(url, translateParameters(params), 'application/fhir+json', options);
    return readTranslateOutput(output);
  }

  /**
   * Starts a Bulk Data import (POST [base]/$import with the manifest, `Prefer: respond-async`) and
   * resolves with the status URL the server answers in Content-Location (poll it with get, cancel
   * it with delete).
   */
  async startImport(manifest: BulkImportManifest, options?: RequestOptions): Promise<string> {
    if (!manifest?.input?.length) {
      throw new OperationOutcomeError(badRequest('The import manifest needs at least one input', 'input'));
    }
    const response = await this.send<Response>({
      method: 'POST',
      url: this.fhirUrl('$import'),
      body: JSON.stringify(manifest),
      contentType: 'application/json',
      options: { ...options, headers: { Prefer: 'respond-async', ...options?.headers } },
      responseType: 'response',
    });
    await response.body?.cancel().catch(() => undefined);
    const location = response.headers.get('content-location');
    if (!location) {
      throw new OperationOutcomeError(
        badRequest(`$import answered ${response.status} without a Content-Location status URL`),
      );
    }
    return new URL(location, this.getBaseUrl()).toString();
  }

  /**
   * Evaluates a quality measure (Measure/[id]/$evaluate-measure, or Measure/$evaluate-measure with
   * `{ canonical: 'url|version' }`) and resolves with the MeasureReport. A GET, unless `persist`
   * asks the server to store the report: then a POST of a Parameters resource.
   *
   * ```ts
   * const report = await hearth.evaluateMeasure('cms122', { periodStart: '2019-01-01', periodEnd: '2019-12-31' });
   * report.group?.[0].population?.map((p) => [p.code?.coding?.[0].code, p.count]);
   * ```
   */
  evaluateMeasure(
    measure: string | { canonical: string },
    params: EvaluateMeasureParams,
    options?: RequestOptions,
  ): Promise<MeasureReport> {
    const path =
      typeof measure === 'string'
        ? `Measure/${encodeURIComponent(measure)}/$evaluate-measure`
        : 'Measure/$evaluate-measure';
    const values: Record<string, string> = {};
    if (typeof measure !== 'string') values.measure = measure.canonical;
    for (const [key, value] of Object.entries(params)) {
      if (value !== undefined && value !== null) values[key] = String(value);
    }
    if (!params.persist) {
      return this.get(this.fhirSearchUrl(path, values), options);
    }
    const parameter = Object.entries(values).map(([name, value]) =>
      name === 'persist' ? { name, valueBoolean: value === 'true' } : { name, valueString: value },
    );
    return this.post(this.fhirUrl(path), { resourceType: 'Parameters', parameter }, undefined, options);
  }

  /**
   * Runs a bot (Bot/[id]/$execute, or Bot/$execute?identifier= for an identifier) with `input`
   * as its body. JSON answers are parsed; others come back as text.
   */
  executeBot<T = unknown>(
    bot: BotIdentifier,
    input: unknown,
    contentType = 'application/json',
    options?: RequestOptions,
  ): Promise<T> {
    const url =
      typeof bot === 'string'
        ? this.fhirUrl('Bot', bot, '$execute')
        : this.fhirSearchUrl('Bot/$execute', { identifier: `${bot.system ?? ''}|${bot.value ?? ''}` });
    const body = isJsonContentType(contentType) && typeof input !== 'string' ? JSON.stringify(input) : input;
    return this.post<T>(url, body, contentType, options);
  }

  /**
   * Uploads bytes as a Binary resource (POST Binary with the raw content). `onProgress` is called
   * while the body is sent: through XMLHttpRequest in a browser, from the streamed body elsewhere.
   */
  async createBinary(binary: CreateBinaryOptions, options?: RequestOptions): Promise<Binary> {
    if (!binary?.contentType) {
      throw new OperationOutcomeError(badRequest('createBinary needs a contentType', 'contentType'));
    }
    const headers: Record<string, string> = { ...options?.headers };
    if (binary.securityContext?.reference) {
      headers['X-Security-Context'] = binary.securityContext.reference;
    }
    if (binary.filename) {
      headers['Content-Disposition'] = `attachment; filename*=UTF-8''${encodeURIComponent(binary.filename)}`;
    }
    const request = {
      method: 'POST',
      url: this.fhirUrl('Binary'),
      contentType: binary.contentType,
      options: { ...options, headers },
    };
    const report = binary.onProgress;
    if (!report) {
      const body = binary.data instanceof Blob ? binary.data : await toBytes(binary.data);
      return this.send<Binary>({ ...request, body: body as Blob });
    }
    const bytes = await toBytes(binary.data);
    let reported = -1;
    const onProgress = (e: UploadProgress) => {
      reported = e.loaded;
      report(e);
    };
    const Xhr = getXhr();
    const result = Xhr
      ? await this.send<Binary>({ ...request, body: bytes as unknown as Blob, fetch: xhrFetch(Xhr, onProgress) })
      : await this.send<Binary>({ ...request, body: () => progressStream(bytes, onProgress) });
    // Every byte was sent once the server answered; say so if the transport's last event did not.
    if (reported < bytes.byteLength) {
      onProgress({ loaded: bytes.byteLength, total: bytes.byteLength, lengthComputable: true });
    }
    return result;
  }

  /** Uploads bytes as a Binary and resolves with an Attachment that points at it. */
  async createAttachment(binary: CreateBinaryOptions, options?: RequestOptions): Promise<Attachment> {
    const created = await this.createBinary(binary, options);
    const attachment: Attachment = {
      contentType: binary.contentType,
      url: (created as Binary & { url?: string }).url ?? `Binary/${created.id}`,
    };
    if (binary.filename) {
      attachment.title = binary.filename;
    }
    return attachment;
  }

  /**
   * Downloads content as a Blob: a URL (relative to the base URL), or a FHIR reference such as an
   * Attachment's 'Binary/123', whose raw content is asked for.
   */
  download(url: string | URL, options?: RequestOptions): Promise<Blob> {
    let text = url.toString();
    if (/^[A-Z][A-Za-z]+\/[A-Za-z0-9\-.]{1,64}$/.test(text)) {
      text = this.fhirUrl(text);
    }
    const headers = { Accept: '*/*', ...options?.headers };
    return this.send<Blob>({ method: 'GET', url: text, options: { ...options, headers }, responseType: 'blob' });
  }

  /** A project's details, members, clients and bots (GET /admin/projects/{projectId}). */
  getProjectAdmin<T = Record<string, unknown>>(projectId: string, options?: RequestOptions): Promise<T> {
    return this.get(`admin/projects/${encodeURIComponent(projectId)}`, options);
  }

  /** Invites a user into a project (POST /admin/projects/{projectId}/invite). */
  invite(projectId: string, body: InviteRequest, options?: RequestOptions): Promise<ProjectMembership> {
    return this.post(`admin/projects/${encodeURIComponent(projectId)}/invite`, body, 'application/json', options);
  }

  /** One membership of a project (GET /admin/projects/{projectId}/members/{membershipId}). */
  getProjectMember(projectId: string, membershipId: string, options?: RequestOptions): Promise<ProjectMembership> {
    return this.get(this.memberUrl(projectId, membershipId), { cache: 'no-cache', ...options });
  }

  /**
   * Changes a membership's admin flag, active flag, access policy (null removes it) or profile
   * label (POST /admin/projects/{projectId}/members/{membershipId}). The server refuses, with a
   * 403 outcome, to demote the project owner, the caller's own membership, or the last active admin.
   */
  updateProjectMember(
    projectId: string,
    membership: ProjectMemberUpdate,
    options?: RequestOptions,
  ): Promise<ProjectMembership> {
    if (!membership.id) {
      return Promise.reject(new OperationOutcomeError(badRequest('The membership has no id', 'id')));
    }
    return this.post(this.memberUrl(projectId, membership.id), membership, 'application/json', options);
  }

  /**
   * Removes a member from a project (DELETE /admin/projects/{projectId}/members/{membershipId});
   * the same rules as updateProjectMember keep the owner, oneself and the last admin.
   */
  removeProjectMember(projectId: string, membershipId: string, options?: RequestOptions): Promise<OperationOutcome> {
    return this.delete(this.memberUrl(projectId, membershipId), options);
  }

  private memberUrl(projectId: string, membershipId: string): string {
    return `admin/projects/${encodeURIComponent(projectId)}/members/${encodeURIComponent(membershipId)}`;
  }

  // ---- scheduling (docs/scheduling.md) ----

  /** Materialises a Schedule's Slots from its availability (Schedule/{id}/$generate-slots); resolves with the counts. */
  generateSlots(scheduleId: string, window: { start?: string; end?: string } = {}, options?: RequestOptions) {
    const parameter = Object.entries(window)
      .filter(([, v]) => v)
      .map(([name, valueDateTime]) => ({ name, valueDateTime }));
    return this.post<Parameters>(
      this.fhirUrl('Schedule', scheduleId, '$generate-slots'),
      { resourceType: 'Parameters', parameter },
      undefined,
      options,
    );
  }

  /** Free Slots (with their Schedules) for a practitioner, location or service type in a date range (Appointment/$find). */
  findSlots(params: FindSlotsParams, options?: RequestOptions): Promise<Bundle> {
    const query: Record<string, string | number> = {};
    for (const [key, value] of Object.entries(params)) {
      if (value !== undefined && value !== null) query[key] = value as string | number;
    }
    return this.get(this.fhirSearchUrl('Appointment/$find', query), { cache: 'no-cache', ...options });
  }

  /**
   * Books a free Slot for a patient (Appointment/$book): resolves with the booked Appointment, or
   * rejects with a 409 outcome when someone else booked the slot first.
   */
  bookAppointment(
    booking: { slot: string; patient?: string; appointment?: Partial<Appointment> },
    options?: RequestOptions,
  ): Promise<Appointment> {
    const parameter: Parameters['parameter'] = [{ name: 'slot', valueReference: { reference: booking.slot } }];
    if (booking.patient) parameter.push({ name: 'patient', valueReference: { reference: booking.patient } });
    if (booking.appointment) {
      parameter.push({
        name: 'appointment',
        resource: { resourceType: 'Appointment', status: 'proposed', participant: [], ...booking.appointment },
      });
    }
    return this.post(
      this.fhirUrl('Appointment', '$book'),
      { resourceType: 'Parameters', parameter },
      undefined,
      options,
    );
  }

  /** Cancels an appointment and frees its slot (Appointment/{id}/$cancel). */
  cancelAppointment(id: string, reason?: string, options?: RequestOptions): Promise<Appointment> {
    const parameter = reason ? [{ name: 'reason', valueString: reason }] : [];
    return this.post(
      this.fhirUrl('Appointment', id, '$cancel'),
      { resourceType: 'Parameters', parameter },
      undefined,
      options,
    );
  }

  /** Moves an appointment to another free slot, freeing the old one (Appointment/{id}/$reschedule). */
  rescheduleAppointment(id: string, slot: string, options?: RequestOptions): Promise<Appointment> {
    return this.post(
      this.fhirUrl('Appointment', id, '$reschedule'),
      { resourceType: 'Parameters', parameter: [{ name: 'slot', valueReference: { reference: slot } }] },
      undefined,
      options,
    );
  }

  /** Creates a client application, with its secret (POST /admin/projects/{projectId}/client). */
  createClient(
    projectId: string,
    body: CreateClientApplicationRequest,
    options?: RequestOptions,
  ): Promise<ClientApplication> {
    return this.post(`admin/projects/${encodeURIComponent(projectId)}/client`, body, 'application/json', options);
  }

  /**
   * The signed-in user's FHIRcast topic: the `hub.topic` of the access token (given to Hearth's own
   * app, and to any token granted a fhircast/ scope). Undefined when signed out or not given one.
   */
  getFhircastTopic(): string | undefined {
    const token = this.getAccessToken();
    const topic = token ? parseJwtPayload(token)?.['hub.topic'] : undefined;
    return typeof topic === 'string' ? topic : undefined;
  }

  /**
   * Publishes a FHIRcast event on the user's topic (POST /fhircast/{topic}) and resolves with it as
   * sent (its id is the one subscribers acknowledge).
   */
  async fhircastPublish(
    name: FhircastEventName,
    context: FhircastContextItem[],
    options: RequestOptions & { versionId?: string; priorVersionId?: string } = {},
  ): Promise<FhircastEvent> {
    const topic = this.getFhircastTopic();
    if (!topic) {
      throw new OperationOutcomeError(badRequest('This session has no FHIRcast topic (hub.topic)', 'hub.topic'));
    }
    const { versionId, priorVersionId, ...requestOptions } = options;
    const event = createFhircastEvent(topic, name, context, { versionId, priorVersionId });
    await this.post(`fhircast/${encodeURIComponent(topic)}`, event, 'application/json', requestOptions);
    return event;
  }

  /** The current context of the user's topic (GET /fhircast/{topic}). */
  fhircastGetContext(options?: RequestOptions): Promise<FhircastCurrentContext> {
    const topic = this.getFhircastTopic();
    if (!topic) {
      return Promise.reject(
        new OperationOutcomeError(badRequest('This session has no FHIRcast topic (hub.topic)', 'hub.topic')),
      );
    }
    return this.get(`fhircast/${encodeURIComponent(topic)}`, { cache: 'no-cache', ...options });
  }

  /** Creates a bot (POST /admin/projects/{projectId}/bot). */
  createBot(projectId: string, body: CreateBotRequest, options?: RequestOptions): Promise<Bot> {
    return this.post(`admin/projects/${encodeURIComponent(projectId)}/bot`, body, 'application/json', options);
  }
}
