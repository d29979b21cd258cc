import {
  createLocalJWKSet,
  exportJWK,
  generateKeyPair,
  importJWK,
  jwtVerify,
  SignJWT,
  type JWK,
  type JWTPayload,
  type JWTVerifyOptions,
} from 'jose';
import type { Resource } from '@hearth/core';
import type { Pool } from '../platform/postgres.js';
import type { Logger } from '../platform/logger.js';
import { parseStored } from '../storage/serialize.js';
import type { Repository } from '../storage/repository.js';

/** A signing key as stored: a JsonWebKey resource whose id is the JWT `kid`. */
interface JsonWebKeyResource extends Resource {
  resourceType: 'JsonWebKey';
  active?: boolean;
  alg: string;
  kty?: string;
  [member: string]: unknown;
}

type SigningKey = Awaited<ReturnType<typeof importJWK>>;

interface LoadedKey {
  kid: string;
  alg: string;
  createdAt: number;
  privateKey: SigningKey;
  publicJwk: JWK;
}

const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi'];
/** Any constant shared by every Hearth process: serialises key generation. */
const KEY_LOCK = 7_246_013_200;
const DAY_MS = 24 * 3600 * 1000;

export interface KeyStoreOptions {
  pool: Pool;
  systemRepo: () => Repository;
  logger: Logger;
  algorithm: string;
  rotationDays: number;
  /** Keys stay valid for verification this long after they stop signing. */
  retireAfterMs: number;
  issuer: string;
}

/**
 * The server's JWT signing keys (ES256 or RS256), kept as JsonWebKey resources so that every
 * process signs and verifies with the same keys. The newest active key signs; older active keys
 * still verify until every token they signed has expired, then they are retired.
 */
export class KeyStore {
  private keys: LoadedKey[] = [];
  private jwks?: ReturnType<typeof createLocalJWKSet>;
  private lastReload = 0;
  private timer?: NodeJS.Timeout;

  constructor(private readonly options: KeyStoreOptions) {
    if (!['ES256', 'RS256'].includes(options.algorithm)) {
      throw new Error(`HEARTH_SIGNING_ALGORITHM must be ES256 or RS256, got "${options.algorithm}"`);
    }
  }

  get issuer(): string {
    return this.options.issuer;
  }

  /** Loads the keys, generating or rotating when due; then checks again every hour. */
  async init(): Promise<void> {
    await this.rotateIfDue();
    this.timer = setInterval(() => {
      this.rotateIfDue().catch((err: unknown) => this.options.logger.error({ err }, 'signing key rotation failed'));
    }, 3600 * 1000);
    this.timer.unref();
  }

  close(): void {
    clearInterval(this.timer);
  }

  /** Generates a new key when the newest is older than the rotation period; retires expired keys. */
  async rotateIfDue(now = Date.now()): Promise<void> {
    await this.reload();
    const newest = this.signingKey();
    const rotationMs = this.options.rotationDays * DAY_MS;
    if (newest && now - newest.createdAt < rotationMs) {
      return;
    }
    const client = await this.options.pool.connect();
    try {
      await client.query('SELECT pg_advisory_lock($1)', [KEY_LOCK]);
      try {
        await this.reload();
        const current = this.signingKey();
        if (!current || now - current.createdAt >= rotationMs) {
          // The keys as they were before this one: a reload may land while the new key is written
          // (the write's change notice reloads every process's keys, this one's included), and
          // the new key, or the one that signed until now, must never be retired here.
          const before = this.keys;
          await this.generate();
          await this.retireOld(now, before, current);
          await this.reload();
        }
      } finally {
        await client.query('SELECT pg_advisory_unlock($1)', [KEY_LOCK]);
      }
    } finally {
      client.release();
    }
  }

  private async generate(): Promise<void> {
    const alg = this.options.algorithm;
    const { privateKey } = await generateKeyPair(alg, {
      extractable: true,
      ...(alg === 'RS256' ? { modulusLength: 2048 } : {}),
    });
    const jwk = await exportJWK(privateKey);
    const created = await this.options.systemRepo().createResource<JsonWebKeyResource>({
      resourceType: 'JsonWebKey',
      active: true,
      alg,
      use: 'sig',
      ...jwk,
    });
    this.options.logger.info({ kid: created.resource.id, alg }, 'generated a new JWT signing key');
  }

  /**
   * Marks keys inactive once nothing they signed can still be valid: of `keys` (those before the
   * rotation), all but the one that signed until now (`lastSigning`, whose tokens are good for
   * retireAfterMs from now).
   */
  private async retireOld(now: number, keys: LoadedKey[], lastSigning: LoadedKey | undefined): Promise<void> {
    const limit = this.options.rotationDays * DAY_MS + this.options.retireAfterMs;
    for (const key of keys) {
      if (key !== lastSigning && now - key.createdAt > limit) {
        const repo = this.options.systemRepo();
        const { resource } = await repo.readResource<JsonWebKeyResource>('JsonWebKey', key.kid);
        await repo.updateResource({ ...resource, active: false });
      }
    }
  }

  /** Reads every active key from the database, newest first. */
  async reload(): Promise<void> {
    const result = await this.options.pool.query<{ content: string; last_updated: Date }>(
      `SELECT r.content, (SELECT min(h.last_updated) FROM "JsonWebKey_History" h WHERE h.id = r.id AND h.project_id = r.project_id) AS last_updated
       FROM "JsonWebKey" r WHERE NOT r.deleted`,
    );
    const keys: LoadedKey[] = [];
    for (const row of result.rows) {
      const stored = parseStored(row.content) as JsonWebKeyResource;
      if (stored.active === false || !stored.id) {
        continue;
      }
      const jwk: JWK = {};
      for (const [k, v] of Object.entries(stored)) {
        if (['kty', 'crv', 'x', 'y', 'n', 'e', ...PRIVATE_MEMBERS].includes(k) && typeof v === 'string') {
          (jwk as Record<string, string>)[k] = v;
        }
      }
      const privateKey = await importJWK(jwk, stored.alg);
      const publicJwk: JWK = { kid: stored.id, alg: stored.alg, use: 'sig' };
      for (const [k, v] of Object.entries(jwk)) {
        if (!PRIVATE_MEMBERS.includes(k)) {
          (publicJwk as Record<string, unknown>)[k] = v;
        }
      }
      keys.push({
        kid: stored.id,
        alg: stored.alg,
        createdAt: new Date(row.last_updated).getTime(),
        privateKey,
        publicJwk,
      });
    }
    keys.sort((a, b) => b.createdAt - a.createdAt || a.kid.localeCompare(b.kid));
    this.keys = keys;
    this.jwks = createLocalJWKSet({ keys: keys.map((k) => k.publicJwk) });
    this.lastReload = Date.now();
  }

  /**
   * The newest key of the configured algorithm. After HEARTH_SIGNING_ALGORITHM changes, keys of
   * the old one only verify (until retired), and a key of the new one is made at once.
   */
  private signingKey(): LoadedKey | undefined {
    return this.keys.find((k) => k.alg === this.options.algorithm);
  }

  /** The public keys, for /.well-known/jwks.json. */
  publicKeys(): { keys: JWK[] } {
    return { keys: this.keys.map((k) => k.publicJwk) };
  }

  /** Signs a JWT with the current key; `expiresIn` in seconds; `typ` tells token kinds apart (RFC 9068 at+jwt). */
  async sign(payload: JWTPayload, expiresInSeconds: number, typ = 'JWT'): Promise<string> {
    const key = this.signingKey();
    if (!key) {
      throw new Error('No signing key loaded');
    }
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT(payload)
      .setProtectedHeader({ alg: key.alg, kid: key.kid, typ })
      .setIssuer(this.options.issuer)
      .setIssuedAt(now)
      .setExpirationTime(now + expiresInSeconds)
      .sign(key.privateKey);
  }

  /**
   * Verifies a JWT this server signed (signature, issuer, expiry). A `kid` this process does not
   * know yet (another process rotated) reloads the keys, at most every 10 seconds.
   */
  async verify(token: string, options: JWTVerifyOptions = {}): Promise<JWTPayload> {
    const verifyOptions: JWTVerifyOptions = { issuer: this.options.issuer, algorithms: ['ES256', 'RS256'], ...options };
    try {
      return (await jwtVerify(token, this.jwks as ReturnType<typeof createLocalJWKSet>, verifyOptions)).payload;
    } catch (err) {
      if ((err as { code?: string }).code === 'ERR_JWKS_NO_MATCHING_KEY' && Date.now() - this.lastReload > 10_000) {
        await this.reload();
        return (await jwtVerify(token, this.jwks as ReturnType<typeof createLocalJWKSet>, verifyOptions)).payload;
      }
      throw err;
    }
  }
}
