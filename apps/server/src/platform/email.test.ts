import { afterEach, describe, expect, it } from 'vitest';
import { startTestSmtpServer, type TestSmtpServer } from '../test/smtp.js';
import { createLogger } from './logger.js';
import { createMailer, type SmtpOptions } from './email.js';

const logger = createLogger('silent');
const message = { to: 'someone@example.org', subject: 'Hello', text: 'A body' };

describe('the SMTP mailer', () => {
  let smtp: (TestSmtpServer & { logins: { user: string; secure: boolean }[] }) | undefined;
  afterEach(async () => {
    await smtp?.close();
    smtp = undefined;
  });
  const options = (port: number, more: Partial<SmtpOptions> = {}): SmtpOptions => ({
    host: '127.0.0.1',
    port,
    secure: false,
    from: 'Hearth <no-reply@example.org>',
    ...more,
  });

  it("verifies the relay's certificate by default, and sends when told to trust a self-signed one", async () => {
    smtp = await startTestSmtpServer({ starttls: true });
    await expect(createMailer(options(smtp.port), logger).send(message)).rejects.toThrow(/certificate/i);
    expect(smtp.messages).toHaveLength(0);
    await createMailer(options(smtp.port, { tlsVerify: false }), logger).send(message);
    expect((await smtp.waitFor('someone@example.org')).raw).toContain('A body');
  });

  it('never sends credentials over a connection without TLS', async () => {
    smtp = await startTestSmtpServer({ auth: { user: 'hearth', password: 'relay-secret' } });
    const mailer = createMailer(options(smtp.port, { user: 'hearth', password: 'relay-secret' }), logger);
    await expect(mailer.send(message)).rejects.toThrow(/STARTTLS|TLS/i);
    expect(smtp.logins).toEqual([]);
    expect(smtp.messages).toHaveLength(0);
  });

  it('authenticates once the connection is encrypted', async () => {
    smtp = await startTestSmtpServer({ starttls: true, auth: { user: 'hearth', password: 'relay-secret' } });
    const mailer = createMailer(
      options(smtp.port, { user: 'hearth', password: 'relay-secret', tlsVerify: false }),
      logger,
    );
    await mailer.send(message);
    expect(smtp.logins).toEqual([{ user: 'hearth', secure: true }]);
    expect(smtp.messages).toHaveLength(1);
  });
});
