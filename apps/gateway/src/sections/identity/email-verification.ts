import { z } from 'zod';
import { DomainError, InputError, ValidationError } from '@platform/errors';
import { publicUrlOf, TEXT_LIMITS as L } from '@platform/service-kit';
import * as p from '../../params';
import { sectionRoutes } from '../../route';

const route = sectionRoutes({ tag: 'Users', backend: 'orgs-teams' });

// Verified e-mail addresses (docs/authentication.md, "Verified e-mail addresses"): the page a mailed link opens, and the
// ways to ask for a new mail. orgs-teams keeps the links (only their hashes) and mails them through the outbox.

const SITE_ADMIN = { on: 'site', permission: 'admin:site' } as const;

const escapeHtml = (t: string) => t.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** A page a person reads in the browser after following a mailed link, with the way to the console. */
function page(status: number, title: string, message: string, consoleUrl: string) {
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head><body><h1>${escapeHtml(title)}</h1><p>${escapeHtml(message)}</p><p><a href="${escapeHtml(consoleUrl)}">Go to the console</a></p></body></html>`;
  return {
    status,
    headers: { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store', 'Referrer-Policy': 'no-referrer' },
    body: Buffer.from(html) as never,
  };
}

const ResendOption = z.object({
  login: z.string().min(1).max(L.email).optional().meta({
    description: 'Without a session or token: the login or e-mail address of the account that cannot sign in yet',
  }),
});

export const emailVerificationRoutes = [
  route({
    method: 'get',
    scope: 'read:user',
    path: '/user/email-verification',
    summary: 'Where the link of a verification mail leads: the address it was sent to is verified, once; answers a page',
    auth: 'public',
    // The link's secret is `code`: `?token=` would be read as an access token.
    query: z.object({ code: z.string().max(200).optional() }),
    response: {
      status: 200,
      contentType: 'text/html',
      description: 'A page saying the address is verified, or (400) why the link is no longer valid',
    },
    errors: [
      {
        status: 400,
        description: 'when the link is unknown, used, replaced by a newer mail, expired, or for an address the account no longer has',
      },
    ],
    async handle({ query }, { backends, config }) {
      const consoleUrl = publicUrlOf(config);
      try {
        if (!query.code) throw new InputError('this verification link is not valid any more: ask for a new mail');
        const user = await backends.orgsTeams.identity.verifyEmail({ token: query.code });
        return page(200, 'E-mail address verified', `${user.email} is verified: you may sign in as ${user.login}.`, consoleUrl);
      } catch (err) {
        if (!(err instanceof DomainError) || err.httpStatus >= 500) throw err;
        return page(400, 'Verification link not valid', err.message, consoleUrl);
      }
    },
  }),
  route({
    method: 'post',
    scope: 'write:user',
    path: '/user/verification-mail',
    summary:
      "Mail a new link verifying the caller's address (signed in), or, without credentials, the address of the account `login` names; the old link stops working",
    auth: 'public',
    body: { schema: ResendOption },
    response: { status: 204, description: 'A mail is on its way (anonymously: the same answer whatever `login` names)' },
    errors: [
      { status: 409, description: 'signed in, when the address is verified already' },
      { status: 422, description: 'anonymously, without `login`' },
      { status: 429, description: 'signed in, within a minute of the last mail' },
    ],
    async handle({ body }, { backends, caller }) {
      if (caller && !caller.serviceAccount) await backends.orgsTeams.identity.sendVerificationMail({ userId: caller.id, login: '' });
      else if (body.login) await backends.orgsTeams.identity.sendVerificationMail({ userId: 0, login: body.login });
      else throw new ValidationError('name the account: {"login": "<login or e-mail address>"}');
      return {};
    },
  }),
  route({
    method: 'post',
    scope: 'write:admin',
    path: '/admin/users/:username/verification-mail',
    summary: 'Mail a user a new link verifying its address (site admin); the old link stops working',
    auth: 'token',
    requires: [SITE_ADMIN],
    params: z.object({ username: p.login }),
    response: { status: 204, description: 'A mail is on its way' },
    errors: [
      { status: 404, description: 'for an unknown user' },
      { status: 409, description: 'when the address is verified already' },
      { status: 429, description: 'within a minute of the last mail' },
    ],
    async handle({ params }, { backends, kept }) {
      const user = await kept.orgsTeams.identity.getUser({ id: 0, login: params.username });
      await backends.orgsTeams.identity.sendVerificationMail({ userId: user.id, login: '' });
      return {};
    },
  }),
];
