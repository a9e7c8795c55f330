import { z } from 'zod';
import { sectionRoutes } from '../../route';
import * as p from '../../params';
import { TEXT_LIMITS } from '@platform/service-kit';

const route = sectionRoutes({ tag: 'Users', backend: 'orgs-teams' });

// A TOTP second factor for local accounts (docs/authentication.md, "Second factor (TOTP)"): enrol, confirm with a
// first code, recovery codes, turn off; a site admin's reset and the site's requirement.

const SITE_ADMIN = { on: 'site', permission: 'admin:site' } as const;

const StatusJson = z
  .object({
    enabled: z.boolean(),
    recovery_codes_left: z.number().int(),
    required: z.boolean().meta({ description: 'Whether the site requires a second factor of this account' }),
  })
  .meta({ id: 'TwoFactorStatus' });

const EnrolmentJson = z
  .object({
    secret: z.string().meta({ description: 'The base32 secret, for entering by hand' }),
    otpauth_uri: z.string().meta({ description: 'otpauth://totp/... for authenticator apps' }),
    qr_svg: z.string().meta({ description: 'The otpauth URI as a QR code (SVG) to scan' }),
  })
  .meta({ id: 'TwoFactorEnrolment' });

const RecoveryCodesJson = z
  .object({ recovery_codes: z.array(z.string()).meta({ description: 'Each usable once in place of a code; shown only now' }) })
  .meta({ id: 'RecoveryCodes' });

const CodeOption = z.object({ code: z.string().min(1).max(64) });

/** What turning the factor off or renewing its codes asks: the password again besides a code (a token alone is not enough). */
const PasswordCodeOption = z.object({
  password: z.string().min(1).max(TEXT_LIMITS.password).meta({ description: "The account's password" }),
  code: z.string().min(1).max(64),
});

const ASKED_AGAIN = [
  { status: 403, description: 'for a wrong password (counted like a failed sign-in)' },
  { status: 404, description: 'when no second factor is on' },
  { status: 422, description: 'for a wrong code (counted like a failed sign-in)' },
  { status: 429, description: 'while the account is locked after too many failed sign-ins (nothing is checked)' },
];

const RequirementJson = z
  .object({
    requirement: z.enum(['off', 'admins', 'all']).meta({
      description: 'Whom password sign-ins require a second factor of: nobody, site admins, or every local account',
    }),
  })
  .meta({ id: 'TwoFactorRequirement' });

/** The requirement as a request: a switch, so its value is required and no other key is taken (nothing changes). */
const RequirementOption = z.strictObject({ requirement: RequirementJson.shape.requirement });

const RevokedJson = z
  .object({
    tokens: z.number().int().meta({ description: 'Access tokens deleted' }),
    sessions: z.number().int().meta({ description: 'Console sessions ended' }),
  })
  .meta({ id: 'RevokedCredentials' });

export const twoFactorRoutes = [
  route({
    method: 'get',
    scope: 'read:user',
    path: '/user/two-factor',
    summary: "Whether the caller's account has a TOTP second factor, its recovery codes left, and whether the site requires one",
    auth: 'token',
    response: { status: 200, schema: StatusJson },
    async handle(_input, { kept, caller }) {
      const s = await kept.orgsTeams.identity.getTwoFactor({ userId: caller.id });
      return { body: { enabled: s.enabled, recovery_codes_left: s.recoveryCodesLeft, required: s.required } };
    },
  }),
  route({
    method: 'post',
    scope: 'write:user',
    path: '/user/two-factor/enrolment',
    summary: 'Begin TOTP enrolment: a new secret, its otpauth URI and QR code; it holds once a code of it is confirmed',
    auth: 'token',
    response: { status: 201, schema: EnrolmentJson },
    errors: [{ status: 409, description: 'when a second factor is already on' }],
    async handle(_input, { backends, caller }) {
      const e = await backends.orgsTeams.identity.beginTwoFactorEnrolment({ userId: caller.id });
      // Loaded on the first enrolment, not with the route table.
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const QRCode = require('qrcode') as typeof import('qrcode');
      const qr = await QRCode.toString(e.otpauthUri, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 });
      return { headers: { 'Cache-Control': 'no-store' }, body: { secret: e.secret, otpauth_uri: e.otpauthUri, qr_svg: qr } };
    },
  }),
  route({
    method: 'post',
    scope: 'write:user',
    path: '/user/two-factor',
    summary: 'Turn the second factor on with a current code of the enrolled secret; answers the recovery codes, shown only now',
    auth: 'token',
    body: { schema: CodeOption },
    response: { status: 201, schema: RecoveryCodesJson },
    errors: [
      { status: 404, description: 'when no enrolment is pending' },
      { status: 409, description: 'when a second factor is already on' },
      { status: 422, description: 'for a wrong code' },
    ],
    async handle({ body }, { backends, caller }) {
      // A wrong code here is not counted: the secret was handed to this caller moments ago (docs/authentication.md).
      const { codes } = await backends.orgsTeams.identity.confirmTwoFactor({ userId: caller.id, code: body.code, password: '' });
      return { headers: { 'Cache-Control': 'no-store' }, body: { recovery_codes: codes } };
    },
  }),
  route({
    method: 'post',
    scope: 'write:user',
    path: '/user/two-factor/recovery-codes',
    summary:
      "New recovery codes after the account's password and a current code (the old ones stop working); a wrong password or code counts like a failed sign-in",
    auth: 'token',
    body: { schema: PasswordCodeOption },
    response: { status: 201, schema: RecoveryCodesJson },
    errors: ASKED_AGAIN,
    async handle({ body }, { backends, caller }) {
      const { codes } = await backends.orgsTeams.identity.regenerateRecoveryCodes({
        userId: caller.id,
        password: body.password,
        code: body.code,
      });
      return { headers: { 'Cache-Control': 'no-store' }, body: { recovery_codes: codes } };
    },
  }),
  route({
    method: 'post',
    scope: 'write:user',
    path: '/user/two-factor/disable',
    summary:
      "Turn the second factor off after the account's password and a current code or a recovery code; a wrong password or code counts like a failed sign-in",
    auth: 'token',
    body: { schema: PasswordCodeOption },
    response: { status: 204 },
    errors: ASKED_AGAIN,
    async handle({ body }, { backends, caller }) {
      await backends.orgsTeams.identity.disableTwoFactor({ userId: caller.id, password: body.password, code: body.code });
      return {};
    },
  }),
  route({
    method: 'delete',
    scope: 'write:admin',
    path: '/admin/users/:username/two-factor',
    summary: "Reset a user's second factor (site admin): it and its recovery codes are removed; the user may enrol again",
    auth: 'token',
    requires: [SITE_ADMIN],
    params: z.object({ username: p.login }),
    response: { status: 204 },
    errors: [{ status: 404, description: 'for an unknown user' }],
    async handle({ params }, { backends }) {
      await backends.orgsTeams.identity.resetTwoFactor({ login: params.username });
      return {};
    },
  }),
  route({
    method: 'delete',
    scope: 'write:admin',
    path: '/admin/users/:username/credentials',
    summary:
      'Revoke every access token and console session of a user at once (site admin): each stops on its next request; the account stays',
    auth: 'token',
    requires: [SITE_ADMIN],
    params: z.object({ username: p.login }),
    response: { status: 200, schema: RevokedJson },
    errors: [{ status: 404, description: 'for an unknown user' }],
    async handle({ params }, { backends }) {
      const revoked = await backends.orgsTeams.identity.revokeUserCredentials({ login: params.username });
      return { body: { tokens: revoked.tokens, sessions: revoked.sessions } };
    },
  }),
  route({
    method: 'get',
    scope: 'read:admin',
    path: '/admin/two-factor',
    summary: 'Whom the site requires a second factor of (site admin)',
    auth: 'token',
    requires: [SITE_ADMIN],
    response: { status: 200, schema: RequirementJson },
    async handle(_input, { kept }) {
      const { requirement } = await kept.orgsTeams.identity.getTwoFactorRequirement({ requirement: '' });
      return { body: { requirement: requirement as 'off' | 'admins' | 'all' } };
    },
  }),
  route({
    method: 'put',
    scope: 'write:admin',
    path: '/admin/two-factor',
    summary:
      'Require a second factor of nobody, site admins or every local account (site admin); those without one may only enrol after a password sign-in',
    auth: 'token',
    requires: [SITE_ADMIN],
    body: { schema: RequirementOption },
    response: { status: 200, schema: RequirementJson },
    async handle({ body }, { backends }) {
      const { requirement } = await backends.orgsTeams.identity.setTwoFactorRequirement({ requirement: body.requirement });
      return { body: { requirement: requirement as 'off' | 'admins' | 'all' } };
    },
  }),
];
