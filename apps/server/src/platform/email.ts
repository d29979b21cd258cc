import nodemailer from 'nodemailer';
import type { Logger } from './logger.js';

export interface EmailMessage {
  to: string | string[];
  subject: string;
  text: string;
  html?: string;
  /** The sender; the configured HEARTH_EMAIL_FROM when absent. */
  from?: string;
  cc?: string[];
  bcc?: string[];
  replyTo?: string;
}

/** Sends email; the only implementation talks SMTP to a configurable relay. */
export interface Mailer {
  send(message: EmailMessage): Promise<void>;
  /** False for the stand-in used without a relay: it logs and drops, so nothing may count on it. */
  readonly delivers?: boolean;
}

export interface SmtpOptions {
  host: string;
  port: number;
  secure: boolean;
  user?: string;
  password?: string;
  from: string;
  /** Verify the relay's TLS certificate (default true); off only for a relay with a self-signed one. */
  tlsVerify?: boolean;
}

/**
 * An SMTP mailer (nodemailer). Without a host, messages are logged (subject and recipient only,
 * never the body: it may hold a password reset link) and dropped.
 */
export function createMailer(options: SmtpOptions, logger: Logger): Mailer {
  if (!options.host) {
    return {
      delivers: false,
      async send(message) {
        logger.warn(
          { to: message.to, subject: message.subject },
          'no SMTP relay configured (HEARTH_SMTP_HOST): email not sent',
        );
      },
    };
  }
  const transport = nodemailer.createTransport({
    host: options.host,
    port: options.port,
    secure: options.secure,
    auth: options.user ? { user: options.user, pass: options.password ?? '' } : undefined,
    // Credentials never go over an unencrypted connection: with a user, the relay must offer
    // STARTTLS (or HEARTH_SMTP_SECURE), so a connection stripped of it fails instead of leaking them.
    requireTLS: Boolean(options.user),
    tls: { rejectUnauthorized: options.tlsVerify !== false },
  });
  return {
    async send(message) {
      await transport.sendMail({ from: options.from, ...message });
    },
  };
}
