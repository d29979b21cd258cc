import { SMTPServer } from 'smtp-server';
import type { AddressInfo } from 'node:net';

export interface ReceivedEmail {
  from: string;
  to: string[];
  /** The raw message (headers and body). */
  raw: string;
}

export interface TestSmtpServer {
  port: number;
  messages: ReceivedEmail[];
  /** Resolves with the first message to `to` (waiting up to 5 s). */
  waitFor(to: string): Promise<ReceivedEmail>;
  close(): Promise<void>;
}

export interface TestSmtpOptions {
  /** Offer STARTTLS, with smtp-server's own self-signed certificate. */
  starttls?: boolean;
  /** Offer AUTH and accept these credentials (recorded in `logins`). */
  auth?: { user: string; password: string };
}

/** A local SMTP relay for tests: accepts every message and keeps it to read. */
export async function startTestSmtpServer(
  options: TestSmtpOptions = {},
): Promise<TestSmtpServer & { logins: { user: string; secure: boolean }[] }> {
  const messages: ReceivedEmail[] = [];
  const logins: { user: string; secure: boolean }[] = [];
  const disabled = [...(options.starttls ? [] : ['STARTTLS']), ...(options.auth ? [] : ['AUTH'])];
  const server = new SMTPServer({
    authOptional: !options.auth,
    disabledCommands: disabled,
    // Without STARTTLS a client may still authenticate in clear: what a stripped connection looks like.
    allowInsecureAuth: true,
    logger: false,
    onAuth(auth, session, callback) {
      logins.push({ user: auth.username ?? '', secure: session.secure });
      if (options.auth && auth.username === options.auth.user && auth.password === options.auth.password) {
        callback(null, { user: auth.username });
      } else {
        callback(new Error('Invalid username or password'));
      }
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        messages.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString('utf8'),
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  return {
    port,
    messages,
    logins,
    async waitFor(to) {
      const deadline = Date.now() + 5000;
      for (;;) {
        const found = messages.find((m) => m.to.includes(to));
        if (found) {
          return found;
        }
        if (Date.now() > deadline) {
          throw new Error(`no email to ${to}`);
        }
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The text of a message body with quoted-printable soft breaks undone. */
export function emailText(raw: string): string {
  return raw.replace(/=\r?\n/g, '').replace(/=3D/g, '=');
}
