import { z } from 'zod';
import { TEXT_LIMITS as L } from '@platform/service-kit';
import { addressKey } from '../../authentication';
import { sectionRoutes } from '../../route';

const route = sectionRoutes({ tag: 'Users', backend: 'orgs-teams' });

// Forgotten passwords (docs/authentication.md, "Forgotten passwords"): ask for a link by login or address, and set a new
// password with it. Anonymous rows: orgs-teams answers a request the same whatever it names, and counts requests and
// invalid links per client address (the peer, or the client TRUST_PROXY vouches for; an IPv6 client by its /64).

/** The link's code: what follows `#code=` in the mailed URL (a fragment, which browsers send to no server). */
const code = z.string().min(1).max(200).meta({ description: 'The code of the mailed link: what follows `#code=` in its URL' });

// The platform's own bodies (no Gitea client sends them): a field they do not know is refused, never ignored.
const PasswordResetRequestOption = z
  .object({
    login: z.string().min(1).max(L.email).meta({ description: 'The login or e-mail address of the account' }),
  })
  .strict();

const PasswordResetCheckOption = z.object({ code }).strict();

const PasswordResetOption = z
  .object({
    code,
    new_password: z.string().min(1).max(L.password).meta({ description: 'At least 8 characters' }),
  })
  .strict();

const PasswordResetLinkJson = z
  .object({
    login: z.string().meta({ description: 'The account whose password the link sets' }),
    expires_at: z.string().meta({ description: 'When the link stops working' }),
  })
  .meta({ id: 'PasswordResetLink' });

const NO_STORE = { 'Cache-Control': 'no-store' };
const TOO_MANY = {
  status: 429,
  description: 'after too many requests or invalid links from this address (Retry-After says when to try again)',
};
const NOT_VALID = {
  status: 400,
  description: 'when the link is unknown, used, replaced by a newer one, expired, or made before the password or the address changed',
};

export const passwordResetRoutes = [
  route({
    method: 'post',
    scope: 'write:user',
    path: '/user/password-reset',
    summary:
      'Ask for a link that sets a new password, mailed to the address of the account `login` names (a login or an e-mail address); the answer is the same whatever it names',
    auth: 'public',
    body: { schema: PasswordResetRequestOption },
    response: {
      status: 204,
      description: 'If an account of that name exists, a link is on its way to its address; the old link stops working',
    },
    errors: [
      {
        status: 429,
        description: 'after too many requests from this address, or for this login or address (whether or not it names an account)',
      },
    ],
    async handle({ body }, { backends, req }) {
      await backends.orgsTeams.identity.requestPasswordReset({ login: body.login, address: addressKey(req.ip) });
      return { headers: NO_STORE };
    },
  }),
  route({
    method: 'post',
    scope: 'read:user',
    path: '/user/password-reset/check',
    summary: 'Whose password a reset link sets, and until when, without using it',
    auth: 'public',
    // A question asked by POST (the code stays out of URLs): it changes nothing an administrator audits.
    audit: false,
    body: { schema: PasswordResetCheckOption },
    response: { status: 200, schema: PasswordResetLinkJson },
    errors: [NOT_VALID, TOO_MANY],
    async handle({ body }, { backends, req }) {
      const link = await backends.orgsTeams.identity.checkPasswordReset({ code: body.code, address: addressKey(req.ip) });
      return { headers: NO_STORE, body: { login: link.login, expires_at: new Date(link.expiresUnix * 1000).toISOString() } };
    },
  }),
  route({
    method: 'post',
    scope: 'write:user',
    path: '/user/password-reset/new-password',
    summary:
      'Set a new password with a reset link, once: every console session of the account ends, its access tokens keep working, its sign-in lockout is lifted',
    auth: 'public',
    body: { schema: PasswordResetOption },
    response: { status: 204, description: 'The password is set; sign in with it' },
    errors: [NOT_VALID, { status: 422, description: 'when the new password is under 8 characters (the link stays usable)' }, TOO_MANY],
    async handle({ body }, { backends, req }) {
      await backends.orgsTeams.identity.resetPassword({ code: body.code, newPassword: body.new_password, address: addressKey(req.ip) });
      return { headers: NO_STORE };
    },
  }),
];
