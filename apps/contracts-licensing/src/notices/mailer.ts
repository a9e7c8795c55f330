import { rootCertificates } from 'node:tls';
import nodemailer from 'nodemailer';

/** One mail: a plain-text and an HTML body of the same content. */
export interface Mail {
  to: string;
  subject: string;
  text: string;
  html: string;
}

/** Where mails go: an SMTP server, or nowhere (they are then kept, for the console). */
export interface Mailer {
  /** 'sent' once the server accepted it; 'kept' when no server is set. Throws when the server refuses, is down or takes longer than SMTP_TIMEOUT_MS. */
  send(mail: Mail): Promise<'sent' | 'kept'>;
  close(): void;
}

export interface SmtpSettings {
  SMTP_URL?: string;
  SMTP_FROM: string;
  SMTP_REQUIRE_TLS: boolean;
  SMTP_TIMEOUT_MS: number;
  NOTIFICATIONS_CA_CERT?: string;
}

/** The CAs TLS connections trust: the system's, and the configured extra one. */
export function trustedCas(extra: string | undefined): string[] | undefined {
  return extra ? [...rootCertificates, extra] : undefined;
}

/**
 * nodemailer over SMTP_URL: smtps:// is TLS from the first byte; smtp:// must upgrade with STARTTLS unless
 * SMTP_REQUIRE_TLS is false, so credentials and mail never cross the network in the clear by default. Without
 * SMTP_URL mails are kept (the notices store them and the console shows them).
 */
export function smtpMailer(settings: SmtpSettings): Mailer {
  if (!settings.SMTP_URL) return { send: async () => 'kept', close() {} };
  // Parsed here: nodemailer, given a `url`, drops every other transport option (TLS among them).
  const url = new URL(settings.SMTP_URL);
  const secure = url.protocol === 'smtps:';
  const timeoutMs = settings.SMTP_TIMEOUT_MS;
  const transport = nodemailer.createTransport({
    host: url.hostname.replace(/^\[|\]$/g, ''),
    port: Number(url.port) || (secure ? 465 : 587),
    auth: url.username ? { user: decodeURIComponent(url.username), pass: decodeURIComponent(url.password) } : undefined,
    secure,
    requireTLS: !secure && settings.SMTP_REQUIRE_TLS,
    tls: { ca: trustedCas(settings.NOTIFICATIONS_CA_CERT), minVersion: 'TLSv1.2' },
    // Each step bounded as the whole attempt is, so an attempt given up leaves no connection waiting longer.
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: timeoutMs,
  });
  // A failure's message is kept in the delivery log and logged: it must never carry the credentials.
  const password = url.password ? decodeURIComponent(url.password) : '';
  return {
    async send(mail) {
      let timer: NodeJS.Timeout | undefined;
      // nodemailer bounds each step, not the attempt: a server answering each step just in time would hold it for minutes.
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`the mail server did not take the mail within ${timeoutMs} ms`)), timeoutMs);
      });
      try {
        await Promise.race([
          transport.sendMail({ from: settings.SMTP_FROM, to: mail.to, subject: mail.subject, text: mail.text, html: mail.html }),
          late,
        ]);
      } catch (err) {
        const message = (err as Error)?.message ?? String(err);
        throw new Error(password ? message.split(password).join('***') : message);
      } finally {
        clearTimeout(timer);
      }
      return 'sent';
    },
    close: () => transport.close(),
  };
}
