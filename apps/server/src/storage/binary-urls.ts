import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Pool } from '../platform/postgres.js';
import { setSettingOnce } from './settings.js';

const SECRET_SETTING = 'binaryUrlSecret';
const ID = '[A-Za-z0-9\\-.]{1,64}';
/** Signed URLs of one window share their expiry, so that a browser may cache the same URL a while. */
const WINDOW_SECONDS = 300;

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Whether the `"url"` at `offset` is a Bundle entry's `request.url` (`{"method":"DELETE","url":"Binary/…"}`
 * in a history or a batch), which names the interaction, not content to download. Its object holds
 * no nested object before the url, so the text since the last `{` shows the `method` beside it; an
 * Attachment has no `method`.
 */
function isBundleRequestUrl(json: string, offset: number): boolean {
  const objectStart = json.lastIndexOf('{', offset);
  return objectStart >= 0 && json.slice(objectStart, offset).includes('"method"');
}

/**
 * Signed, expiring download URLs of Binary content (`{base}storage/{id}?exp=…&sig=…`), so that a
 * browser can show an attachment (an `<img src>`) without an Authorization header. An
 * `Attachment.url` naming a Binary of this server (`Binary/{id}` or `{fhirBase}Binary/{id}`) is
 * rewritten to one in the responses of a caller who could read the resource holding it, and turned
 * back to `Binary/{id}` in what is written, so that stored resources never keep an expiring URL.
 * The signature (HMAC-SHA256 under a secret every process shares, kept in the database) covers
 * the id and the expiry.
 */
export class BinaryUrlSigner {
  private secret?: Promise<Buffer>;
  private readonly inResponse: RegExp;
  private readonly signedUrl: RegExp;

  constructor(
    private readonly pool: Pool,
    private readonly baseUrl: string,
    fhirBase: string,
    /** How long a signed URL serves, at least (up to one window more). */
    private readonly ttlSeconds = 3600,
  ) {
    this.inResponse = new RegExp(`"url"(\\s*):(\\s*)"(?:${escapeRegExp(fhirBase)})?Binary/(${ID})"`, 'g');
    this.signedUrl = new RegExp(`^${escapeRegExp(baseUrl)}storage/(${ID})\\?exp=\\d+&sig=[A-Za-z0-9_-]+$`);
  }

  private key(): Promise<Buffer> {
    this.secret ??= setSettingOnce(this.pool, SECRET_SETTING, randomBytes(32).toString('base64')).then((s) =>
      Buffer.from(s, 'base64'),
    );
    return this.secret;
  }

  private async signature(id: string, expires: number): Promise<Buffer> {
    return createHmac('sha256', await this.key())
      .update(`${id}.${expires}`)
      .digest();
  }

  /** The signed URL of a Binary; `ttlSeconds` from now, rounded up to the window. */
  async sign(id: string, ttlSeconds = this.ttlSeconds): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    const expires = Math.ceil((now + ttlSeconds) / WINDOW_SECONDS) * WINDOW_SECONDS;
    const sig = (await this.signature(id, expires)).toString('base64url');
    return `${this.baseUrl}storage/${id}?exp=${expires}&sig=${sig}`;
  }

  /** Whether a signature is genuine and unexpired. */
  async verify(id: string, exp: unknown, sig: unknown): Promise<'valid' | 'expired' | 'invalid'> {
    if (typeof exp !== 'string' || !/^\d{1,12}$/.test(exp) || typeof sig !== 'string' || sig.length > 100) {
      return 'invalid';
    }
    const expected = await this.signature(id, Number(exp));
    const given = Buffer.from(sig, 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      return 'invalid';
    }
    return Number(exp) * 1000 < Date.now() ? 'expired' : 'valid';
  }

  /** A JSON response with each Attachment.url of a Binary here replaced by its signed URL. */
  async signResponse(json: string): Promise<string> {
    const ids = new Set<string>();
    for (const m of json.matchAll(this.inResponse)) {
      if (!isBundleRequestUrl(json, m.index)) {
        ids.add(m[3]);
      }
    }
    if (ids.size === 0) {
      return json;
    }
    const signed = new Map<string, string>();
    for (const id of ids) {
      signed.set(id, await this.sign(id));
    }
    return json.replace(this.inResponse, (all: string, s1: string, s2: string, id: string, offset: number) => {
      return isBundleRequestUrl(json, offset) ? all : `"url"${s1}:${s2}${JSON.stringify(signed.get(id))}`;
    });
  }

  /** Turns signed URLs in a body about to be written back into `Binary/{id}` (in place). */
  unsign(value: unknown, depth = 0): void {
    // Parsed JSON only: plain objects and arrays (never a stream or other live object).
    if (depth > 100 || typeof value !== 'object' || value === null) {
      return;
    }
    if (!Array.isArray(value) && Object.getPrototypeOf(value) !== Object.prototype) {
      return;
    }
    if (Array.isArray(value)) {
      for (const item of value) {
        this.unsign(item, depth + 1);
      }
      return;
    }
    const record = value as Record<string, unknown>;
    for (const [key, v] of Object.entries(record)) {
      if (key === 'url' && typeof v === 'string') {
        const m = this.signedUrl.exec(v);
        if (m) {
          record.url = `Binary/${m[1]}`;
        }
      } else if (typeof v === 'object') {
        this.unsign(v, depth + 1);
      }
    }
  }
}
