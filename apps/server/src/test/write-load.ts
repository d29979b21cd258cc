// A write load for fault tests: concurrent clients create, update and post transactions, and
// remember exactly what the server acknowledged. Afterwards `verify` reads everything back and
// lists every acknowledged write that is missing or differs from what was sent, and every
// transaction that is partly visible.
import { randomUUID } from 'node:crypto';
import { prng } from '../../../../tools/bench/data.js';

const FHIR_JSON = 'application/fhir+json';
const CREATE_SYSTEM = 'urn:hearth-test:write-load';
const TRANSACTION_SYSTEM = 'urn:hearth-test:write-load-transaction';

/**
 * A seeded pseudo-random generator (the benchmark's mulberry32): a failing run is replayed with its
 * printed seed.
 */
export const seededRandom = prng;

/** The server the clients talk to (it changes when a killed server is replaced). */
export interface LoadTarget {
  baseUrl: string;
  headers: Record<string, string>;
}

interface TrackedPatient {
  id: string;
  family: string;
  identifier: string;
  /** The `given` of the last acknowledged write and its version. */
  ackedGiven: string;
  ackedVersion: number;
  /** What the stored resource may hold: the acknowledged write or any unanswered one after it. */
  possible: Set<string>;
}

interface TrackedTransaction {
  id: string;
  size: number;
  acked: boolean;
}

export interface WriteLoadOptions {
  clients: number;
  transactionSize: number;
  random: () => number;
  /** A request not answered within this is counted as hung (and abandoned). */
  requestTimeoutMs: number;
}

/** What the clients saw: counts per status ('network' when no answer came), and what broke the rules. */
export interface LoadReport {
  statuses: Record<string, number>;
  /** 5xx other than 503, 503 without Retry-After, requests past the timeout. */
  violations: string[];
  longestMs: number;
}

export class WriteLoad {
  private target?: LoadTarget;
  private stopping = false;
  private loops: Promise<void>[] = [];
  private readonly patients: TrackedPatient[] = [];
  private readonly transactions: TrackedTransaction[] = [];
  private readonly statuses = new Map<string, number>();
  private readonly violations: string[] = [];
  private longestMs = 0;
  private acks = 0;
  private ackWaiters: { count: number; resolve: () => void }[] = [];

  constructor(private readonly options: WriteLoadOptions) {}

  setTarget(target: LoadTarget): void {
    this.target = target;
  }

  get acknowledged(): number {
    return this.acks;
  }

  /** Resolves once `count` more writes have been acknowledged. */
  acknowledgedMore(count: number): Promise<void> {
    return new Promise((resolve) => this.ackWaiters.push({ count: this.acks + count, resolve }));
  }

  start(): void {
    this.stopping = false;
    this.loops = Array.from({ length: this.options.clients }, (_, client) => this.client(client));
  }

  /** Lets each client finish (or fail) its request in flight, then stops. */
  async stop(): Promise<void> {
    this.stopping = true;
    await Promise.all(this.loops);
  }

  report(): LoadReport {
    return {
      statuses: Object.fromEntries(this.statuses),
      violations: [...this.violations],
      longestMs: this.longestMs,
    };
  }

  /** Resets the counts of report() (not what was acknowledged). */
  resetReport(): void {
    this.statuses.clear();
    this.violations.length = 0;
    this.longestMs = 0;
  }

  private async client(client: number): Promise<void> {
    const { random } = this.options;
    const own: TrackedPatient[] = [];
    let n = 0;
    while (!this.stopping) {
      const r = random();
      n++;
      let ok: boolean;
      if (own.length === 0 || r < 0.35) {
        ok = await this.create(client, n, own);
      } else if (r < 0.88) {
        ok = await this.update(own[Math.floor(random() * own.length)], n);
      } else {
        ok = await this.transaction();
      }
      if (!ok) {
        // The server is down or refusing: back off a little instead of spinning.
        await new Promise((resolve) => setTimeout(resolve, 50 + Math.floor(random() * 100)));
      }
    }
  }

  private acknowledge(): void {
    this.acks++;
    this.ackWaiters = this.ackWaiters.filter((w) => {
      if (this.acks >= w.count) {
        w.resolve();
        return false;
      }
      return true;
    });
  }

  /** One request; undefined when no answer came (refused, reset, or past the timeout). */
  private async send(
    method: string,
    path: string,
    body: unknown,
  ): Promise<{ status: number; json: unknown } | undefined> {
    const target = this.target;
    if (!target) {
      throw new Error('WriteLoad has no target');
    }
    const started = Date.now();
    try {
      const res = await fetch(`${target.baseUrl}fhir/R4/${path}`, {
        method,
        headers: { ...target.headers, 'content-type': FHIR_JSON },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(this.options.requestTimeoutMs),
      });
      const text = await res.text();
      this.count(String(res.status));
      if (res.status >= 500 && res.status !== 503) {
        this.violations.push(`${method} ${path}: ${res.status} ${text.slice(0, 500)}`);
      } else if (res.status === 503 && !res.headers.get('retry-after')) {
        this.violations.push(`${method} ${path}: 503 without Retry-After ${text.slice(0, 300)}`);
      } else if (res.status === 401 || res.status === 403) {
        this.violations.push(`${method} ${path}: ${res.status} ${text.slice(0, 300)}`);
      }
      return { status: res.status, json: res.ok ? JSON.parse(text) : undefined };
    } catch (err) {
      if ((err as Error).name === 'TimeoutError') {
        this.violations.push(`${method} ${path}: no answer within ${this.options.requestTimeoutMs} ms`);
        this.count('hung');
      } else {
        this.count('network');
      }
      return undefined;
    } finally {
      this.longestMs = Math.max(this.longestMs, Date.now() - started);
    }
  }

  private count(key: string): void {
    this.statuses.set(key, (this.statuses.get(key) ?? 0) + 1);
  }

  private async create(client: number, n: number, own: TrackedPatient[]): Promise<boolean> {
    const identifier = randomUUID();
    const family = `Load-${client}-${n}`;
    const res = await this.send('POST', 'Patient', patient(undefined, identifier, family, 'v0'));
    if (res?.status !== 201) {
      return false;
    }
    const created = res.json as { id: string; meta: { versionId: string } };
    const tracked: TrackedPatient = {
      id: created.id,
      family,
      identifier,
      ackedGiven: 'v0',
      ackedVersion: Number(created.meta.versionId),
      possible: new Set(['v0']),
    };
    own.push(tracked);
    this.patients.push(tracked);
    this.acknowledge();
    return true;
  }

  private async update(tracked: TrackedPatient, n: number): Promise<boolean> {
    const given = `v${n}`;
    tracked.possible.add(given);
    const res = await this.send(
      'PUT',
      `Patient/${tracked.id}`,
      patient(tracked.id, tracked.identifier, tracked.family, given),
    );
    if (res?.status !== 200) {
      return false;
    }
    tracked.ackedGiven = given;
    tracked.ackedVersion = Number((res.json as { meta: { versionId: string } }).meta.versionId);
    tracked.possible = new Set([given]);
    this.acknowledge();
    return true;
  }

  private async transaction(): Promise<boolean> {
    const tracked: TrackedTransaction = { id: randomUUID(), size: this.options.transactionSize, acked: false };
    this.transactions.push(tracked);
    const entry = Array.from({ length: tracked.size }, (_, i) => ({
      fullUrl: `urn:uuid:${randomUUID()}`,
      resource: {
        resourceType: 'Patient',
        identifier: [{ system: TRANSACTION_SYSTEM, value: tracked.id }],
        name: [{ family: `Txn-${i}` }],
      },
      request: { method: 'POST', url: 'Patient' },
    }));
    const res = await this.send('POST', '', { resourceType: 'Bundle', type: 'transaction', entry });
    if (res?.status !== 200) {
      return false;
    }
    tracked.acked = true;
    this.acknowledge();
    return true;
  }

  /**
   * Reads back every acknowledged write and every transaction sent (16 requests at a time):
   * returns what is wrong, empty when every acknowledged write is there with the content sent and
   * every transaction is wholly there (acknowledged ones) or wholly absent.
   */
  async verify(
    target: LoadTarget,
  ): Promise<{ problems: string[]; patients: number; transactions: number; unanswered: number }> {
    const problems: string[] = [];
    const get = async (path: string): Promise<{ status: number; body: Record<string, unknown> }> => {
      const res = await fetch(`${target.baseUrl}fhir/R4/${path}`, { headers: target.headers });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };
    const checkPatient = async (p: TrackedPatient): Promise<void> => {
      const { status, body } = await get(`Patient/${p.id}`);
      if (status !== 200) {
        problems.push(`Patient/${p.id} (acknowledged as version ${p.ackedVersion}) reads ${status}`);
        return;
      }
      const stored = body as {
        meta: { versionId: string };
        name?: { family?: string; given?: string[] }[];
        identifier?: { value?: string }[];
      };
      const version = Number(stored.meta.versionId);
      const given = stored.name?.[0]?.given?.[0] ?? '';
      if (stored.name?.[0]?.family !== p.family || stored.identifier?.[0]?.value !== p.identifier) {
        problems.push(`Patient/${p.id}: stored name or identifier differ from those sent: ${JSON.stringify(stored)}`);
      } else if (version < p.ackedVersion) {
        problems.push(`Patient/${p.id}: version ${version} stored, ${p.ackedVersion} was acknowledged`);
      } else if (version === p.ackedVersion ? given !== p.ackedGiven : !p.possible.has(given)) {
        problems.push(
          `Patient/${p.id}: holds given "${given}" at version ${version}; acknowledged "${p.ackedGiven}" at ${p.ackedVersion}, possible ${[...p.possible].join(',')}`,
        );
      }
    };
    const checkTransaction = async (t: TrackedTransaction): Promise<void> => {
      const { status, body } = await get(
        `Patient?identifier=${encodeURIComponent(`${TRANSACTION_SYSTEM}|${t.id}`)}&_count=${t.size * 2}&_elements=name`,
      );
      const entries = ((body.entry as { resource: { name?: { family?: string }[] } }[] | undefined) ?? []).map(
        (e) => e.resource.name?.[0]?.family,
      );
      if (status !== 200) {
        problems.push(`transaction ${t.id}: search answered ${status}`);
      } else if (entries.length !== 0 && entries.length !== t.size) {
        problems.push(`transaction ${t.id} is partly visible: ${entries.length} of ${t.size} entries`);
      } else if (t.acked && entries.length !== t.size) {
        problems.push(`transaction ${t.id} was acknowledged but ${entries.length} of ${t.size} entries are stored`);
      } else if (entries.length === t.size) {
        const expected = Array.from({ length: t.size }, (_, i) => `Txn-${i}`);
        if ([...entries].sort().join() !== [...expected].sort().join()) {
          problems.push(`transaction ${t.id}: stored entries differ from those sent`);
        }
      }
    };
    const work: (() => Promise<void>)[] = [
      ...this.patients.map((p) => () => checkPatient(p)),
      ...this.transactions.map((t) => () => checkTransaction(t)),
    ];
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        for (let next = work.shift(); next; next = work.shift()) {
          await next();
        }
      }),
    );
    return {
      problems,
      patients: this.patients.length,
      transactions: this.transactions.filter((t) => t.acked).length,
      unanswered: this.transactions.filter((t) => !t.acked).length,
    };
  }
}

function patient(id: string | undefined, identifier: string, family: string, given: string): Record<string, unknown> {
  return {
    resourceType: 'Patient',
    ...(id ? { id } : {}),
    identifier: [{ system: CREATE_SYSTEM, value: identifier }],
    name: [{ family, given: [given] }],
  };
}
