// Outgoing e-mail over SMTP (nodemailer): invitations, password resets and review requests.
import nodemailer from 'nodemailer';

/** One plain-text message to one person. */
export interface MailMessage {
  to: string;
  subject: string;
  text: string;
}

/** Sends mail; rejects when the server refuses the message. */
export interface Mailer {
  send(message: MailMessage): Promise<void>;
}

/**
 * A mailer for `SMTP_URL` (smtp:// upgrades with STARTTLS when the server offers it, smtps:// is
 * TLS from the start; credentials ride in the URL) sending as `SMTP_FROM`.
 */
export function smtpMailer(smtp: { url: string; from: string }): Mailer {
  const transport = nodemailer.createTransport(smtp.url);
  return {
    async send(message) {
      await transport.sendMail({
        from: smtp.from,
        to: message.to,
        subject: message.subject,
        text: message.text,
      });
    },
  };
}
