import nodemailer from 'nodemailer';
import type { Logger } from './logger.js';

export interface EmailMessage {
  to: string;
  subject: string;
  text: string;
  html?: string;
}

/** Sends email; the only implementation talks SMTP to a configurable relay. */
export interface Mailer {
  send(message: EmailMessage): Promise<void>;
}

export interface SmtpOptions {
  host: string;
  port: number;
  secure: boolean;
  user?: string;
  password?: string;
  from: string;
}

/**
 * An SMTP mailer (nodemailer). Without a host, messages are logged (subject and recipient only,
 * never the body: it may hold a password reset link) and dropped.
 */
export function createMailer(options: SmtpOptions, logger: Logger): Mailer {
  if (!options.host) {
    return {
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
    // A local relay in tests and many self-hosted setups has a self-signed certificate.
    tls: { rejectUnauthorized: false },
  });
  return {
    async send(message) {
      await transport.sendMail({ from: options.from, ...message });
    },
  };
}
