/**
 * A real OpenID Connect provider for tests (oidc-provider, by the author of openid-client),
 * listening on loopback. It signs users in without a form (the test names who signs in next) and
 * can rewrite the ID token of its next token response, to prove the relying party refuses
 * tokens that are forged, misissued or replayed.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodeJwt, decodeProtectedHeader, exportJWK, generateKeyPair, SignJWT, type JWTPayload } from 'jose';
import Provider, { type Configuration, type KoaContextWithOIDC } from 'oidc-provider';

type PrivateKey = Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];

export interface TestIdentityProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** The paths of every request the provider received, in order. */
  requests: string[];
  /**
   * Follows an authorization request through the provider as `account` (signed in, consent
   * given) and answers the URL it sends the browser back to, with its code and state.
   */
  authorize(authorizationUrl: string, account: { sub: string; email: string }): Promise<URL>;
  /** The next token response carries `rewrite(its ID token)` instead. */
  rewriteNextIdToken(rewrite: (idToken: string) => Promise<string>): void;
  /** The ID token re-signed with its claims changed: by the provider's own key, or by another of the same `kid`. */
  reissue(idToken: string, changes: JWTPayload, by?: 'provider' | 'impostor'): Promise<string>;
  close(): Promise<void>;
}

/** Starts a provider that knows one confidential client, which may redirect to `redirectUri`. */
export async function startIdentityProvider(redirectUri: string): Promise<TestIdentityProvider> {
  const clientId = 'hearth-at-idp';
  const clientSecret = 'idp-secret';
  const kid = 'idp-key-1';
  const providerKey = await generateKeyPair('RS256', { extractable: true });
  const impostorKey = await generateKeyPair('RS256');
  const emails = new Map<string, string>();
  const requests: string[] = [];
  let rewriteNext: ((idToken: string) => Promise<string>) | undefined;

  const configuration: Configuration = {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: [redirectUri],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    jwks: { keys: [{ ...(await exportJWK(providerKey.privateKey)), kid, alg: 'RS256', use: 'sig' }] },
    claims: { openid: ['sub'], email: ['email', 'email_verified'] },
    // The email claims in the ID token itself, as most providers send them.
    conformIdTokenClaims: false,
    findAccount: (_ctx, sub) => ({
      accountId: sub,
      claims: () => ({ sub, email: emails.get(sub), email_verified: true }),
    }),
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    // Consent is given by signing in: the grant is created on the first authorization.
    loadExistingGrant: async (ctx: KoaContextWithOIDC) => {
      const { client, session, provider } = ctx.oidc;
      const grantId = ctx.oidc.result?.consent?.grantId ?? session?.grantIdFor(client?.clientId ?? '');
      if (grantId) {
        return provider.Grant.find(grantId);
      }
      const grant = new provider.Grant({ clientId: client?.clientId, accountId: session?.accountId });
      grant.addOIDCScope('openid email profile');
      await grant.save();
      return grant;
    },
    ttl: { Interaction: 600, Grant: 600, Session: 600, AccessToken: 600, IdToken: 600, AuthorizationCode: 60 },
    features: { devInteractions: { enabled: false } },
    cookies: { keys: ['test-cookie-key'] },
  };

  let issuer = '';
  const server: Server = createServer((req, res) => {
    void handle(req, res).catch((err: Error) => {
      res.writeHead(500).end(err.message);
    });
  });
  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const op = provider;
    const path = new URL(req.url ?? '/', issuer).pathname;
    requests.push(path);
    if (path.startsWith('/interaction/')) {
      const details = await op.interactionDetails(req, res);
      const accountId = details.params.login_hint as string;
      await op.interactionFinished(req, res, { login: { accountId } }, { mergeWithLastSubmission: false });
      return;
    }
    if (path === '/token' && req.method === 'POST' && rewriteNext) {
      const rewrite = rewriteNext;
      rewriteNext = undefined;
      interceptBody(res, async (body) => {
        const json = JSON.parse(body) as { id_token?: string };
        if (json.id_token) {
          json.id_token = await rewrite(json.id_token);
        }
        return JSON.stringify(json);
      });
    }
    op.callback()(req, res);
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // Requests reach `handle` only once the provider exists: its issuer is the port just bound.
  const provider = new Provider(issuer, configuration);

  return {
    issuer,
    clientId,
    clientSecret,
    requests,
    async authorize(authorizationUrl, account) {
      emails.set(account.sub, account.email);
      // Who signs in travels as login_hint, so the interaction knows whom to sign in.
      const first = new URL(authorizationUrl);
      first.searchParams.set('login_hint', account.sub);
      const cookies = new Map<string, string>();
      let next = first;
      for (let hop = 0; hop < 10; hop++) {
        const res = await fetch(next, {
          redirect: 'manual',
          headers: { cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; ') },
        });
        for (const setCookie of res.headers.getSetCookie()) {
          const [pair] = setCookie.split(';');
          const eq = pair.indexOf('=');
          cookies.set(pair.slice(0, eq), pair.slice(eq + 1));
        }
        const location = res.headers.get('location');
        if (!location) {
          throw new Error(`The provider answered ${res.status} without a redirect: ${await res.text()}`);
        }
        next = new URL(location, next);
        if (next.origin !== issuer) {
          return next;
        }
      }
      throw new Error('The provider kept redirecting');
    },
    rewriteNextIdToken(rewrite) {
      rewriteNext = rewrite;
    },
    async reissue(idToken, changes, by = 'provider') {
      const header = decodeProtectedHeader(idToken);
      return new SignJWT({ ...decodeJwt(idToken), ...changes })
        .setProtectedHeader({ ...header, alg: 'RS256', kid })
        .sign((by === 'provider' ? providerKey.privateKey : impostorKey.privateKey) as PrivateKey);
    },
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** Replaces what a response handler writes with `rewrite(body)`, fixing its length. */
function interceptBody(res: ServerResponse, rewrite: (body: string) => Promise<string>): void {
  const chunks: Buffer[] = [];
  const write = res.write.bind(res);
  const end = res.end.bind(res);
  res.write = ((chunk: string | Buffer) => {
    chunks.push(Buffer.from(chunk));
    return true;
  }) as typeof res.write;
  res.end = ((chunk?: string | Buffer | (() => void)) => {
    if (chunk && typeof chunk !== 'function') {
      chunks.push(Buffer.from(chunk));
    }
    void rewrite(Buffer.concat(chunks).toString('utf8')).then((body) => {
      const payload = Buffer.from(body);
      if (!res.headersSent) {
        res.setHeader('content-length', payload.length);
      }
      write(payload);
      end();
    });
    return res;
  }) as typeof res.end;
}
