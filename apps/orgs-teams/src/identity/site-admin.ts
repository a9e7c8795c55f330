import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ConflictError, UnavailableError } from '@platform/errors';
import type { orgsTeamsV1 } from '@platform/proto';
import type { CallContext } from '@platform/service-kit';
import type { Identity } from './identity';
import type { Relationships } from '../relationships';

/** The site object every site-admin permission is checked on. */
export const SITE_OBJECT = 'site:platform';

/** The file under DATA_DIR that keeps a generated bootstrap password (owner-only). */
export const BOOTSTRAP_PASSWORD_FILE = 'bootstrap-admin-password';

export interface SiteAdminSettings {
  username: string;
  email: string;
  password?: string;
  /** Where a generated password is also kept (DATA_DIR/bootstrap-admin-password); not kept when absent. */
  passwordFile?: string;
}

/** What createUser needs of the authz side: writing the site-admin tuple (authz over gRPC, or the admin CLI's engine). */
export type TupleWriter = Pick<Relationships, 'write'>;

/**
 * First start: when no site admin exists, create one from PLATFORM_ADMIN_* and grant it the site admin
 * relation. A generated password is printed once to stderr (never to the log). Later starts only make sure
 * every site admin still holds the relation (a crash between the two writes must not leave an admin without it).
 * Replicas starting together on a fresh database race to create it: the one that loses finds the winner's admin
 * and carries on as a later start does.
 */
export async function ensureSiteAdmin(
  identity: Identity,
  relationships: TupleWriter,
  settings: SiteAdminSettings,
  ctx: CallContext,
): Promise<void> {
  const existing = async () => {
    const admins = await identity.siteAdminIds();
    for (const id of admins) await grantSiteAdmin(relationships, id, ctx);
    return admins.length > 0;
  };
  if (await existing()) {
    if (settings.password) await warnIfNotApplied(identity, settings.username, settings.password, ctx);
    return;
  }
  const password = settings.password ?? randomBytes(18).toString('base64url');
  let user: orgsTeamsV1.User;
  try {
    // Not createUser's undo on a failed grant: another replica may already have found this admin and gone on with it.
    user = await identity.createUser({
      username: settings.username,
      email: settings.email,
      password,
      fullName: 'Site administrator',
      mustChangePassword: false,
      isAdmin: true,
    });
  } catch (err) {
    if (!(err instanceof ConflictError)) throw err;
    // Taken meanwhile by another replica's bootstrap: its admin stands.
    if (await existing()) return;
    // Taken and gone again (removed meanwhile): retried like an unreachable authz.
    const stillTaken = await identity.getUser({ id: 0, login: settings.username }).then(
      () => true,
      () => false,
    );
    if (!stillTaken) throw new UnavailableError(`another replica is creating the site admin "${settings.username}"; retrying`);
    // A user of that name who is no site admin: an error of the settings, not a race.
    throw err;
  }
  ctx.log.info({ userId: user.id, login: user.login }, 'site admin created');
  if (!settings.password) {
    const kept = settings.passwordFile ? keepPassword(settings.passwordFile, password) : undefined;
    process.stderr.write(
      `\n  Site admin "${user.login}" created with generated password: ${password}\n` +
        (kept?.file ? `  It is also in ${kept.file}, readable only by its owner.\n` : '') +
        (kept?.earlier ? `  The earlier file there was kept as ${kept.earlier}.\n` : '') +
        (kept?.failed ? `  It could not be kept in ${settings.passwordFile}: ${kept.failed}; it is shown only now.\n` : '') +
        `  Lost it? npm run -s cli -- reset-password ${user.login}. Set PLATFORM_ADMIN_PASSWORD to choose one.\n\n`,
    );
  }
  // Granted after the password is shown: while authz is not up this fails, the start's retry finds this admin and
  // grants it then (as after a crash between the two writes), and the password stays the one shown.
  await grantSiteAdmin(relationships, user.id, ctx);
}

/**
 * PLATFORM_ADMIN_PASSWORD is read only when the first site admin is created. On data from an earlier start it
 * changes nothing, which used to go unsaid (and a client then got 401 with the password it had just set): say so,
 * in the log and on the terminal, with what to do instead.
 */
async function warnIfNotApplied(identity: Identity, username: string, password: string, ctx: CallContext): Promise<void> {
  const matches = await identity.passwordMatches(username, password);
  if (matches) return;
  const what =
    matches === undefined
      ? `there is no user "${username}" (PLATFORM_ADMIN_USERNAME) here: the site admins were created by an earlier start`
      : `site admin "${username}" exists from an earlier start on this data and keeps its password`;
  ctx.log.warn({ login: username }, `PLATFORM_ADMIN_PASSWORD was not applied: ${what}`);
  process.stderr.write(
    `\n  PLATFORM_ADMIN_PASSWORD was not applied: ${what}.\n` +
      `  Sign in with that password, or stop the platform and run npm run -s cli -- reset-password ${username},\n` +
      `  or start on a fresh DATA_DIR.\n\n`,
  );
}

/**
 * Writes the generated password to `file`, readable by the owner only (0600). Written to a temporary file and
 * linked into place, so the file is never seen half-written; an existing file (from an earlier bootstrap on
 * another database) is never overwritten but moved aside, and the banner says where. Never throws: the
 * password is also printed.
 */
function keepPassword(file: string, password: string): { file?: string; earlier?: string; failed?: string } {
  const target = path.resolve(file);
  const tmp = `${target}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.writeFileSync(tmp, `${password}\n`, { mode: 0o600, flag: 'wx' });
    let earlier: string | undefined;
    try {
      fs.linkSync(tmp, target);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      earlier = `${target}.replaced-${new Date().toISOString().replace(/[:.]/g, '-')}`;
      fs.renameSync(target, earlier);
      fs.linkSync(tmp, target);
    }
    return { file: target, earlier };
  } catch (err) {
    return { failed: (err as NodeJS.ErrnoException).code ?? (err as Error).message };
  } finally {
    fs.rmSync(tmp, { force: true });
  }
}

/**
 * Creates a user; a site admin also gets the site-admin relation, and the account is removed again when that
 * cannot be written, so no admin exists without it (decision D6).
 */
export async function createUser(
  identity: Identity,
  relationships: TupleWriter,
  req: orgsTeamsV1.CreateUserRequest,
  ctx: CallContext,
): Promise<orgsTeamsV1.User> {
  const user = await identity.createUser(req);
  if (!req.isAdmin) return user;
  try {
    await grantSiteAdmin(relationships, user.id, ctx);
  } catch (err) {
    await identity.deleteAccount(user.id);
    throw err;
  }
  return user;
}

/**
 * Writes `user:<id> admin site:platform`; already holding it is fine (another replica's bootstrap may have granted
 * it first).
 */
async function grantSiteAdmin(relationships: TupleWriter, userId: number, ctx: CallContext): Promise<void> {
  try {
    await relationships.write([{ user: `user:${userId}`, relation: 'admin', object: SITE_OBJECT }], [], ctx);
  } catch (err) {
    if (!(err instanceof ConflictError)) throw err;
  }
}
