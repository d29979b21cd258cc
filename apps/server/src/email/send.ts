// POST /email/v1/send (the platform the spec describes): email from a project's admins and bots,
// through the server's SMTP relay, from the project's verified domains only.
import { badRequest, fail, forbiddenWith, serviceUnavailable } from '@hearth/core';
import type { EmailMessage, Mailer } from '../platform/email.js';

/** Project.systemSetting (valueString, set by super admins): the sender domains a project may send from, comma or space separated. */
export const VERIFIED_DOMAINS_SETTING = 'emailVerifiedDomains';

const MAX_RECIPIENTS = 50;
const MAX_SUBJECT = 998;
/** An address as found in a From/To header: `name@domain`, or `Name <name@domain>`. */
const ADDRESS = /^(?:[^<>@]*<)?([^\s<>@]+)@([A-Za-z0-9.-]+\.[A-Za-z]{2,})>?$/;

export interface EmailSender {
  projectId: string;
  /** Project admins and bots may send. */
  projectAdmin: boolean;
  profile: string;
  /** The project's system settings (Project.systemSetting: only super admins set them). */
  systemSettings: { name?: string; valueString?: string }[];
}

function addressDomain(text: string, where: string): string {
  const m = ADDRESS.exec(text.trim());
  if (!m) {
    fail(badRequest(`"${text}" is not an email address`, where));
  }
  return m[2].toLowerCase();
}

function addresses(value: unknown, where: string, required: boolean): string[] {
  if (value === undefined && !required) {
    return [];
  }
  const list = typeof value === 'string' ? [value] : value;
  if (!Array.isArray(list) || list.length === 0 || list.some((v) => typeof v !== 'string')) {
    fail(badRequest(`${where} must be an email address or a list of them`, where));
  }
  (list as string[]).forEach((a, i) => addressDomain(a, `${where}[${i}]`));
  return list as string[];
}

/** The verified sender domains of a project (lower case). */
export function verifiedDomains(settings: EmailSender['systemSettings']): string[] {
  const value = settings.find((s) => s.name === VERIFIED_DOMAINS_SETTING)?.valueString ?? '';
  return value
    .split(/[\s,]+/)
    .map((d) => d.trim().toLowerCase())
    .filter(Boolean);
}

/** Checks who sends and what, then sends; every refusal is a 4xx saying why (503 without a relay). */
export async function sendProjectEmail(mailer: Mailer, sender: EmailSender, body: unknown): Promise<void> {
  if (!sender.projectAdmin && !sender.profile.startsWith('Bot/')) {
    fail(forbiddenWith('Only project admins and bots may send email'));
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body) || Buffer.isBuffer(body)) {
    fail(badRequest('Send a JSON object: { to, from, subject, text, html }'));
  }
  const input = body as Record<string, unknown>;
  const to = addresses(input.to, 'to', true);
  const cc = addresses(input.cc, 'cc', false);
  const bcc = addresses(input.bcc, 'bcc', false);
  if (to.length + cc.length + bcc.length > MAX_RECIPIENTS) {
    fail(badRequest(`At most ${MAX_RECIPIENTS} recipients in one email`, 'to'));
  }
  if (typeof input.subject !== 'string' || input.subject.trim() === '' || input.subject.length > MAX_SUBJECT) {
    fail(badRequest(`subject is required (at most ${MAX_SUBJECT} characters)`, 'subject'));
  }
  if (/[\r\n]/.test(input.subject)) {
    fail(badRequest('subject must be one line', 'subject'));
  }
  const text = input.text;
  const html = input.html;
  if ((text !== undefined && typeof text !== 'string') || (html !== undefined && typeof html !== 'string')) {
    fail(badRequest('text and html must be strings', typeof text !== 'string' ? 'text' : 'html'));
  }
  if (!text && !html) {
    fail(badRequest('The email needs a body: text or html', 'text'));
  }
  if (typeof input.from !== 'string') {
    fail(badRequest("from is required: an address of one of the project's verified domains", 'from'));
  }
  const domain = addressDomain(input.from, 'from');
  const allowed = verifiedDomains(sender.systemSettings);
  if (!allowed.includes(domain)) {
    fail(
      forbiddenWith(
        allowed.length === 0
          ? `The project has no verified sender domain: a super admin sets Project.systemSetting ${VERIFIED_DOMAINS_SETTING}`
          : `${domain} is not a verified sender domain of this project (${allowed.join(', ')})`,
      ),
    );
  }
  const replyTo = input.replyTo;
  if (replyTo !== undefined) {
    addresses(replyTo, 'replyTo', false);
  }
  if (mailer.delivers === false) {
    fail(serviceUnavailable('This server has no SMTP relay (HEARTH_SMTP_HOST): email cannot be sent'));
  }
  const message: EmailMessage = {
    from: input.from,
    to,
    subject: input.subject,
    text: typeof text === 'string' ? text : '',
    ...(typeof html === 'string' ? { html } : {}),
    ...(cc.length ? { cc } : {}),
    ...(bcc.length ? { bcc } : {}),
    ...(typeof replyTo === 'string' ? { replyTo } : {}),
  };
  await mailer.send(message);
}
