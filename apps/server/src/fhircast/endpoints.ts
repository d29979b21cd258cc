import { createHmac, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import type { Pool } from '../platform/postgres.js';
import { setSettingOnce } from '../storage/settings.js';

const SECRET_SETTING = 'fhircastEndpointSecret';

/** What a websocket channel endpoint stands for: one subscription of one topic. */
export interface EndpointClaims {
  /** The subscription's id (unguessable: part of a signed URL). */
  id: string;
  projectId: string;
  topic: string;
  /** Event names as the spec writes them. */
  events: string[];
  /** When the lease ends (ms since the epoch). */
  expires: number;
  /** subscriber.name, when the subscriber gave one (named in SyncError). */
  name?: string;
}

/**
 * The websocket channel endpoints the hub hands out (`hub.channel.endpoint`,
 * wss://host/ws/fhircast/{token}): the subscription signed with HMAC-SHA256 under a secret every
 * process shares (kept in the database), so a subscriber may connect to any process.
 */
export class EndpointTokens {
  private secret?: Promise<Buffer>;

  constructor(private readonly pool: Pool) {}

  private key(): Promise<Buffer> {
    this.secret ??= setSettingOnce(this.pool, SECRET_SETTING, randomBytes(32).toString('base64')).then((s) =>
      Buffer.from(s, 'base64'),
    );
    return this.secret;
  }

  async issue(claims: Omit<EndpointClaims, 'id'>): Promise<{ token: string; id: string }> {
    const id = randomUUID();
    const payload = Buffer.from(
      JSON.stringify({
        i: id,
        p: claims.projectId,
        t: claims.topic,
        e: claims.events,
        x: claims.expires,
        ...(claims.name ? { n: claims.name } : {}),
      }),
    ).toString('base64url');
    const sig = createHmac('sha256', await this.key())
      .update(payload)
      .digest('base64url');
    return { token: `${payload}.${sig}`, id };
  }

  /** The claims of a genuine token (expired or not: the caller decides), else undefined. */
  async verify(token: string): Promise<EndpointClaims | undefined> {
    if (token.length > 4000) {
      return undefined;
    }
    const [payload, sig, extra] = token.split('.');
    if (!payload || !sig || extra !== undefined) {
      return undefined;
    }
    const expected = createHmac('sha256', await this.key())
      .update(payload)
      .digest();
    const given = Buffer.from(sig, 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      return undefined;
    }
    try {
      const c = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>;
      if (
        typeof c.i !== 'string' ||
        typeof c.p !== 'string' ||
        typeof c.t !== 'string' ||
        !Array.isArray(c.e) ||
        typeof c.x !== 'number'
      ) {
        return undefined;
      }
      return {
        id: c.i,
        projectId: c.p,
        topic: c.t,
        events: c.e.map(String),
        expires: c.x,
        ...(typeof c.n === 'string' ? { name: c.n } : {}),
      };
    } catch {
      return undefined;
    }
  }
}

/** The websocket URL of a channel endpoint token: ws(s)://host/ws/fhircast/{token}. */
export function endpointUrl(baseUrl: string, token: string): string {
  const url = new URL(`ws/fhircast/${token}`, baseUrl);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  return url.toString();
}

/** The token at the end of a channel endpoint URL (or the token itself). */
export function endpointToken(endpoint: string): string {
  const path = endpoint.split('?')[0].replace(/\/+$/, '');
  return path.slice(path.lastIndexOf('/') + 1);
}
