/** The server-rendered pages of the browser sign-in (http/authorize.ts and the launch context pickers): markup, escaping, headers. */
import type { FastifyReply, FastifyRequest } from 'fastify';

/** Fields of an authorization request or of a sign-in page's form. */
export type Fields = Record<string, string | undefined>;
export type HumanName = { given?: string[]; family?: string; text?: string };

export function displayName(names: HumanName[] | undefined): string {
  const name = names?.[0];
  return name?.text ?? ([...(name?.given ?? []), name?.family].filter(Boolean).join(' ') || 'Unnamed patient');
}

/** The authorization request parameters carried through the sign-in pages (RFC 6749 §4.1.1, SMART). */
export const CARRIED = [
  'response_type',
  'client_id',
  'redirect_uri',
  'scope',
  'state',
  'code_challenge',
  'code_challenge_method',
  'nonce',
  'launch',
  'aud',
];

export function escapeHtml(text: string): string {
  return text.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string,
  );
}

export function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${escapeHtml(title)}</title><style>
body{font-family:system-ui,sans-serif;background:#f6f6f4;display:flex;justify-content:center;padding-top:8vh;margin:0}
main{background:#fff;border:1px solid #ddd;border-radius:8px;padding:2rem;width:22rem}
h1{font-size:1.3rem;margin:0 0 1rem}label{display:block;margin:.8rem 0 .2rem;font-size:.9rem}
input[type=email],input[type=password],input[type=text]{width:100%;box-sizing:border-box;padding:.5rem;font-size:1rem}
button{margin-top:1.2rem;width:100%;padding:.6rem;font-size:1rem;background:#c2410c;color:#fff;border:0;border-radius:4px}
.error{color:#b91c1c;margin:.5rem 0}.choice{display:block;margin:.4rem 0}</style></head>
<body><main>${body}</main></body></html>`;
}

export function hidden(fields: Fields, names: string[]): string {
  return names
    .filter((n) => fields[n] !== undefined)
    .map((n) => `<input type="hidden" name="${n}" value="${escapeHtml(fields[n] as string)}">`)
    .join('');
}

/**
 * The CSP source of a (registered, already checked) redirect URI: its origin, or its scheme for a
 * custom scheme. Browsers apply form-action to the redirects that follow a form post too, so the
 * forms of these pages, which end in a redirect to the client, must be allowed to go there.
 */
function redirectSource(redirectUri: string | undefined): string {
  if (!redirectUri) {
    return '';
  }
  try {
    const url = new URL(redirectUri);
    if (url.protocol === 'http:' || url.protocol === 'https:') {
      return ` ${url.origin}`;
    }
    return /^[a-z][a-z0-9+.-]*:$/i.test(url.protocol) ? ` ${url.protocol}` : '';
  } catch {
    return '';
  }
}

export function sendHtml(reply: FastifyReply, status: number, html: string, redirectUri?: string): FastifyReply {
  return reply
    .code(status)
    .header('content-type', 'text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .header('x-frame-options', 'DENY')
    .header(
      'content-security-policy',
      `default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'self'${redirectSource(redirectUri)}`,
    )
    .send(html);
}

export function redirectWith(
  reply: FastifyReply,
  redirectUri: string,
  params: Record<string, string | undefined>,
): FastifyReply {
  const url = new URL(redirectUri);
  for (const [k, v] of Object.entries(params)) {
    if (v !== undefined) {
      url.searchParams.set(k, v);
    }
  }
  return reply.header('cache-control', 'no-store').redirect(url.toString(), 302);
}

export function fieldsOf(request: FastifyRequest): Fields {
  const source = (request.method === 'GET' ? request.query : request.body) as Record<string, unknown> | undefined;
  const out: Fields = {};
  for (const [k, v] of Object.entries(source ?? {})) {
    if (typeof v === 'string') {
      out[k] = v;
    }
  }
  return out;
}
