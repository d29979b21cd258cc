/**
 * The loopback redirect of the browser sign-in (RFC 8252 §7.3): a one-shot HTTP server on
 * 127.0.0.1 that receives `code` and `state` from /oauth2/authorize, and opening the browser.
 */
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { CliError } from '../output.js';

export interface AuthorizationResponse {
  code: string;
  state?: string;
}

export interface CallbackServer {
  /** Resolves with the code of the first redirect carrying the expected state. */
  result: Promise<AuthorizationResponse>;
  close(): Promise<void>;
}

function page(title: string, text: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title></head>
<body style="font-family:system-ui,sans-serif;padding:3rem"><h1>${title}</h1><p>${text}</p></body></html>`;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * Listens on the redirect URI's host and port. Requests to other paths, or with another state, are
 * answered 400/404 and ignored (they are not this sign-in's redirect).
 */
export async function startCallbackServer(
  redirectUri: URL,
  expectedState: () => string | undefined,
): Promise<CallbackServer> {
  let settle: { resolve: (r: AuthorizationResponse) => void; reject: (e: Error) => void } | undefined;
  const result = new Promise<AuthorizationResponse>((resolve, reject) => {
    settle = { resolve, reject };
  });
  // The rejection is handled by whoever awaits `result`; never an unhandled rejection meanwhile.
  result.catch(() => undefined);
  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', redirectUri);
    const send = (status: number, html: string) => {
      response.writeHead(status, { 'content-type': 'text/html; charset=utf-8', connection: 'close' });
      response.end(html);
    };
    if (url.pathname !== redirectUri.pathname) {
      send(404, page('Not found', 'This is the Hearth CLI sign-in callback.'));
      return;
    }
    const state = url.searchParams.get('state') ?? undefined;
    const expected = expectedState();
    if (expected !== undefined && state !== expected) {
      send(400, page('Sign-in failed', 'The state of this redirect does not match the sign-in in progress.'));
      return;
    }
    const error = url.searchParams.get('error');
    if (error) {
      const description = url.searchParams.get('error_description') ?? '';
      send(400, page('Sign-in failed', escapeHtml(`${error}: ${description}`)));
      settle?.reject(new CliError(`Sign-in failed: ${error}${description ? `: ${description}` : ''}`));
      return;
    }
    const code = url.searchParams.get('code');
    if (!code) {
      send(400, page('Sign-in failed', 'The redirect carries no code.'));
      return;
    }
    send(200, page('Signed in to Hearth', 'You can close this window and go back to the terminal.'));
    settle?.resolve({ code, state });
  });
  const port = Number(redirectUri.port || (redirectUri.protocol === 'https:' ? 443 : 80));
  const host = redirectUri.hostname.replace(/^\[|\]$/g, '');
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(
        new CliError(
          err.code === 'EADDRINUSE'
            ? `Port ${port} is in use: choose another with --port (and register its redirect URI)`
            : `Cannot listen on ${host}:${port}: ${err.message}`,
        ),
      ),
    );
    server.listen(port, host, () => resolve());
  });
  return {
    result,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Opens a URL in the user's browser, when the platform has a way to; says nothing when it has not. */
export function openBrowser(url: string): void {
  const [command, args] =
    process.platform === 'darwin'
      ? ['open', [url]]
      : process.platform === 'win32'
        ? ['cmd', ['/c', 'start', '""', url.replace(/&/g, '^&')]]
        : ['xdg-open', [url]];
  try {
    const child = spawn(command, args, { stdio: 'ignore', detached: true });
    child.on('error', () => undefined); // no opener installed: the printed URL is the way
    child.unref();
  } catch {
    // as above
  }
}

/** Rejects after `ms`, so that a sign-in nobody finishes ends. */
export function timeout(ms: number, message: string): { promise: Promise<never>; cancel(): void } {
  let timer: NodeJS.Timeout | undefined;
  const promise = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new CliError(message)), ms);
  });
  promise.catch(() => undefined);
  return { promise, cancel: () => clearTimeout(timer) };
}
