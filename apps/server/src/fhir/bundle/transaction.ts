// Transactions: all entries or none, in one database transaction (hl7.org/fhir/R4/http.html#transaction).
import {
  badRequest,
  fail,
  generateId,
  OperationOutcomeError,
  type OperationOutcome,
  type Resource,
} from '@hearth/core';
import { existingMatch, updateTarget } from '../../storage/conditional.js';
import type { Repository } from '../../storage/repository.js';
import { storeBinaryResource } from '../binary/content.js';
import { executeEntry, writeEntryResult, type EntryDeps, type EntryResult } from './entry.js';
import type { RequestEntry } from './parse.js';
import {
  collectReferenceHolders,
  conditionKey,
  isConditionalReference,
  isPlaceholder,
  substituteQuery,
  type ReferenceHolder,
  type UrlHolder,
} from './references.js';

/**
 * Runs a transaction in the order the spec sets (DELETE, POST, PUT/PATCH, GET). Every id is known
 * before anything is written: new ids are assigned up front and conditions resolved, so that
 * placeholders and conditional references can be rewritten in every resource, and all plain
 * creates go to the database in one multi-row write.
 */
export async function runTransaction(
  repo: Repository,
  entries: RequestEntry[],
  deps: EntryDeps,
): Promise<EntryResult[]> {
  assertNoDuplicates(entries);
  const storedKeys: string[] = [];
  try {
    return await repo.withTransaction((tx) => processTransaction(tx, entries, deps, storedKeys));
  } catch (err) {
    await Promise.all(storedKeys.map((key) => deps.binary.remove(key)));
    throw err;
  }
}

async function processTransaction(
  tx: Repository,
  entries: RequestEntry[],
  deps: EntryDeps,
  storedKeys: string[],
): Promise<EntryResult[]> {
  const results: EntryResult[] = new Array<EntryResult>(entries.length);
  const fullUrls = new Map<string, string>();
  const conditions = new Map<string, string>();
  const of = (...methods: string[]) => entries.filter((e) => methods.includes(e.method));
  const isSearchPost = (e: RequestEntry) => e.method === 'POST' && e.target.special === '_search';

  for (const e of of('DELETE')) {
    results[e.index] = await atEntry(e, () => executeEntry(tx, e, deps));
  }

  // POST: an id for every create, or the existing match of a conditional create.
  const creates: RequestEntry[] = [];
  const createdFor = new Map<string, RequestEntry>();
  const sameAs = new Map<RequestEntry, RequestEntry>();
  for (const e of of('POST').filter((p) => !isSearchPost(p))) {
    await atEntry(e, async () => {
      const type = e.target.resourceType as string;
      if (!type || e.target.id || e.target.special) {
        fail(badRequest(`POST ${e.url} is not a create`, `Bundle.entry[${e.index}].request.url`));
      }
      tx.assertType(type);
      let id: string | undefined;
      if (e.ifNoneExist) {
        const query = substituteQuery(e.ifNoneExist, fullUrls);
        const earlier = createdFor.get(conditionKey(type, query));
        if (earlier) {
          // The same condition as an earlier create of this Bundle: that one resource answers both.
          sameAs.set(e, earlier);
          if (e.fullUrl) {
            fullUrls.set(e.fullUrl, `${type}/${earlier.resource?.id as string}`);
          }
          return;
        }
        id = await existingMatch(tx, type, query, 'ifNoneExist');
        if (id !== undefined) {
          results[e.index] = writeEntryResult(await tx.readResource(type, id), deps.fhirBase, 200);
          conditions.set(conditionKey(type, query), `${type}/${id}`);
        }
      }
      if (id === undefined) {
        id = generateId();
        e.resource = { ...(e.resource as Resource), id };
        creates.push(e);
        if (e.ifNoneExist) {
          const key = conditionKey(type, substituteQuery(e.ifNoneExist, fullUrls));
          conditions.set(key, `${type}/${id}`);
          createdFor.set(key, e);
        }
      }
      if (e.fullUrl) {
        fullUrls.set(e.fullUrl, `${type}/${id}`);
      }
    });
  }

  // PUT: the id each update lands on (conditional updates resolve theirs now).
  const puts = of('PUT');
  for (const e of puts) {
    await atEntry(e, async () => {
      const type = e.target.resourceType as string;
      tx.assertType(type);
      let id = e.target.id;
      if (!id && !e.target.special && e.target.query) {
        const query = substituteQuery(e.target.query, fullUrls);
        id = (await updateTarget(tx, type, query, e.resource?.id)) ?? generateId();
        conditions.set(conditionKey(type, query), `${type}/${id}`);
        e.target = { resourceType: type, id, query: '' };
        e.resource = { ...(e.resource as Resource), id };
      }
      if (id && e.fullUrl) {
        fullUrls.set(e.fullUrl, `${type}/${id}`);
      }
    });
  }

  // References in every resource about to be written: placeholders, fullUrls and conditions.
  await rewriteReferences(tx, [...creates, ...puts], fullUrls, conditions);

  if (creates.length > 0) {
    const resources: Resource[] = [];
    for (const e of creates) {
      let resource = e.resource as Resource;
      if (resource.resourceType === 'Binary') {
        const stored = await atEntry(e, () => storeBinaryResource(deps.binary, resource));
        if (stored.key) {
          storedKeys.push(stored.key);
        }
        resource = stored.resource;
      }
      resources.push(resource);
    }
    let written;
    try {
      written = await tx.createMany(resources);
    } catch (err) {
      throw locateCreateFailure(tx, creates, resources, err);
    }
    creates.forEach((e, i) => {
      results[e.index] = writeEntryResult(written[i], deps.fhirBase, 201);
    });
    for (const [e, earlier] of sameAs) {
      results[e.index] = { ...results[earlier.index], status: 200 };
    }
  }

  // Binary content written by PUT entries is removed again if the transaction rolls back.
  const putDeps: EntryDeps = { ...deps, onStored: (key) => storedKeys.push(key) };
  for (const e of entries.filter((x) => x.method === 'PUT' || x.method === 'PATCH')) {
    results[e.index] = await atEntry(e, () => executeEntry(tx, e, putDeps));
  }
  for (const e of entries.filter((x) => x.method === 'GET' || x.method === 'HEAD' || isSearchPost(x))) {
    // A search may name a resource of this Bundle by its placeholder: Observation?subject=urn:uuid:...
    e.target = { ...e.target, query: substituteQuery(e.target.query, fullUrls) };
    results[e.index] = await atEntry(e, () => executeEntry(tx, e, deps));
  }
  return results;
}

async function rewriteReferences(
  tx: Repository,
  writes: RequestEntry[],
  fullUrls: Map<string, string>,
  conditions: Map<string, string>,
): Promise<void> {
  const resolved = new Map<string, string>();
  for (const e of writes) {
    const holders: ReferenceHolder[] = [];
    const urls: UrlHolder[] = [];
    collectReferenceHolders(e.resource, holders, urls);
    for (const holder of urls) {
      // Attachment.url naming a Binary of the Bundle (not a Reference, but the same placeholder).
      holder.url = fullUrls.get(holder.url) ?? holder.url;
    }
    for (const holder of holders) {
      const ref = holder.reference;
      let target = fullUrls.get(ref) ?? resolved.get(ref);
      if (target === undefined && isConditionalReference(ref)) {
        target = await atEntry(e, () => resolveConditionalReference(tx, ref, fullUrls, conditions));
        resolved.set(ref, target);
      }
      if (target !== undefined) {
        holder.reference = target;
      } else if (isPlaceholder(ref)) {
        throw atEntrySync(e, () =>
          badRequest(`Reference ${ref} does not match the fullUrl of any entry of the Bundle`),
        );
      }
    }
  }
}

async function resolveConditionalReference(
  tx: Repository,
  ref: string,
  fullUrls: Map<string, string>,
  conditions: Map<string, string>,
): Promise<string> {
  const q = ref.indexOf('?');
  const type = ref.slice(0, q);
  const query = substituteQuery(ref.slice(q + 1), fullUrls);
  const inBundle = conditions.get(conditionKey(type, query));
  if (inBundle) {
    return inBundle;
  }
  return `${type}/${await tx.resolveCondition(type, query)}`;
}

/** Two entries may not write the same resource, nor share a fullUrl (http.html#trules). */
function assertNoDuplicates(entries: RequestEntry[]): void {
  const fullUrls = new Set<string>();
  const targets = new Set<string>();
  for (const e of entries) {
    if (e.fullUrl) {
      if (fullUrls.has(e.fullUrl)) {
        fail(badRequest(`Two entries have the fullUrl ${e.fullUrl}`, `Bundle.entry[${e.index}].fullUrl`));
      }
      fullUrls.add(e.fullUrl);
    }
    if ((e.method === 'PUT' || e.method === 'DELETE' || e.method === 'PATCH') && e.target.id) {
      const key = `${e.target.resourceType}/${e.target.id}`;
      if (targets.has(key)) {
        fail(badRequest(`Two entries change ${key}`, `Bundle.entry[${e.index}].request.url`));
      }
      targets.add(key);
    }
  }
}

/** Runs one step of an entry; its errors name the entry they came from. */
export async function atEntry<T>(e: RequestEntry, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw annotate(err, e);
  }
}

function atEntrySync(e: RequestEntry, fn: () => OperationOutcome): OperationOutcomeError {
  return annotate(new OperationOutcomeError(fn()), e) as OperationOutcomeError;
}

/** Prefixes an outcome's texts with the entry and maps resource paths to Bundle.entry[i].resource paths. */
export function annotate(err: unknown, e: RequestEntry): unknown {
  if (!(err instanceof OperationOutcomeError) || (err as { annotated?: boolean }).annotated) {
    return err;
  }
  const type = e.resource?.resourceType ?? e.target.resourceType;
  const prefix = `Bundle.entry[${e.index}] (${e.method} ${e.url})`;
  const outcome: OperationOutcome = {
    ...err.outcome,
    issue: err.outcome.issue.map((issue) => ({
      ...issue,
      details: { ...issue.details, text: `${prefix}: ${issue.details?.text ?? issue.diagnostics ?? issue.code}` },
      expression: issue.expression?.map((x) =>
        type && (x === type || x.startsWith(`${type}.`))
          ? `Bundle.entry[${e.index}].resource${x.slice(type.length)}`
          : x,
      ),
    })),
  };
  const annotated = new OperationOutcomeError(outcome, err);
  (annotated as { annotated?: boolean }).annotated = true;
  return annotated;
}

/** createMany checks all resources at once; find which entry a validation failure belongs to. */
function locateCreateFailure(tx: Repository, creates: RequestEntry[], resources: Resource[], err: unknown): unknown {
  if (!(err instanceof OperationOutcomeError)) {
    return err;
  }
  for (let i = 0; i < resources.length; i++) {
    try {
      tx.check(resources[i]);
    } catch (checkErr) {
      return annotate(checkErr, creates[i]);
    }
  }
  return err;
}
