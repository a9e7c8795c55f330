import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { assertOpenFgaSettings, authzApp, authzMigrations, chooseEngine } from '@platform/app-authz';
import {
  BOOTSTRAP_PASSWORD_FILE,
  createUser,
  Identity,
  orgsTeamsMigrations,
  verifyPassword,
  type TupleWriter,
} from '@platform/app-orgs-teams';
import { createCallContext, createLogger, loadConfig } from '@platform/service-kit';
import { requireMigrated, withDatabase, type Databases, databaseEnv } from './database';
import { CliError, EXIT, type CliIo } from './io';

/** How a command gets a password: given, on standard input, or generated (and printed once). */
export interface PasswordOptions {
  password?: string;
  passwordStdin?: boolean;
}

/** The CLI logs nothing: what it did is said in lines of its own, and secrets only on stdout. */
const quiet = () => createLogger('platform-cli', 'silent');

/** `create-admin`: a new user who is a site admin (is_admin and the `admin site:platform` tuple). */
export async function createAdmin(
  opts: PasswordOptions & { username: string; email: string; fullName?: string },
  io: CliIo,
): Promise<number> {
  const { password, generated } = await choosePassword(opts, io);
  await withDatabase(io.env, { create: false }, async (dbs) => {
    const identity = await openIdentity(dbs);
    const tuples = await siteAdminTuples(dbs, io.env);
    const user = await createUser(
      identity,
      tuples,
      {
        username: opts.username,
        email: opts.email,
        password,
        fullName: opts.fullName ?? 'Site administrator',
        mustChangePassword: false,
        isAdmin: true,
      },
      createCallContext(quiet()),
    );
    io.err(`created site admin "${user.login}" (id ${user.id}) in ${dbs.where}\n`);
  });
  if (generated) showGenerated(io, 'its generated password', password);
  return EXIT.ok;
}

/** `reset-password`: a new password for a user; must_change_password is cleared unless asked for. */
export async function resetPassword(
  username: string,
  opts: PasswordOptions & { mustChangePassword?: boolean },
  io: CliIo,
): Promise<number> {
  const { password, generated } = await choosePassword(opts, io);
  await withDatabase(io.env, { create: false }, async (dbs) => {
    const identity = await openIdentity(dbs);
    const before = await identity.setPassword(username, password, !!opts.mustChangePassword);
    io.err(`password of "${before.login}" reset in ${dbs.where}${opts.mustChangePassword ? '; it must be changed at next sign-in' : ''}\n`);
    await forgetBootstrapPassword(io, before.password_hash);
  });
  if (generated) showGenerated(io, 'the new password', password);
  return EXIT.ok;
}

/** `mint-token`: a personal access token for a user, printed once. */
export async function mintToken(username: string, opts: { name: string }, io: CliIo): Promise<number> {
  const token = await withDatabase(io.env, { create: false }, async (dbs) => {
    const identity = await openIdentity(dbs);
    const user = await identity.getUser({ id: 0, login: username });
    const created = await identity.createToken(user.id, opts.name);
    io.err(`token "${created.name}" (id ${created.id}) created for "${user.login}"; it is shown only now\n`);
    if (!user.active) io.err(`note: "${user.login}" is not active, so the token is refused until the account is active again\n`);
    if (user.prohibitLogin) io.err(`note: "${user.login}" is prohibited from logging in, so the token is refused\n`);
    return created.sha1;
  });
  io.out(`${token}\n`);
  return EXIT.ok;
}

async function openIdentity(dbs: Databases): Promise<Identity> {
  const db = await dbs.open('identity');
  await requireMigrated(db, orgsTeamsMigrations);
  return new Identity(db);
}

/**
 * The site-admin tuple goes where authz keeps tuples, written with authz's own engine as the configuration
 * chooses it: OpenFGA (OPENFGA_API_URL, OPENFGA_STORE_ID) or the embedded engine over the authz schema. So it
 * needs neither a running authz nor its address, and works with the platform stopped (required on the
 * embedded database). Orgs-teams re-asserts the tuple of every is_admin account at its next start anyway.
 */
async function siteAdminTuples(dbs: Databases, env: NodeJS.ProcessEnv): Promise<TupleWriter> {
  const config = loadConfig({ ...authzApp.env, ...databaseEnv }, env);
  assertOpenFgaSettings(config);
  const db = await dbs.open('authz');
  await requireMigrated(db, authzMigrations);
  const { engine } = await chooseEngine(config, db, quiet()).catch((err) => {
    throw new CliError(`cannot use OpenFGA at ${config.OPENFGA_API_URL} (OPENFGA_API_URL): ${(err as Error).message}`, EXIT.unavailable);
  });
  return { write: (writes, deletes) => engine.write(writes, deletes, { idempotent: true }) };
}

/** The password given, read from stdin, or a generated one (as strong as the bootstrap's: 144 random bits). */
async function choosePassword(opts: PasswordOptions, io: CliIo): Promise<{ password: string; generated: boolean }> {
  if (opts.password !== undefined && opts.passwordStdin)
    throw new CliError('give either --password or --password-stdin, not both', EXIT.usage);
  if (opts.passwordStdin) {
    const [line] = (await io.readStdin()).split(/\r?\n/);
    if (!line) throw new CliError('--password-stdin: standard input has no password on its first line', EXIT.usage);
    return { password: line, generated: false };
  }
  if (opts.password !== undefined) return { password: opts.password, generated: false };
  return { password: randomBytes(18).toString('base64url'), generated: true };
}

/** A generated password: on stdout alone (so `$(...)` takes it), once. */
function showGenerated(io: CliIo, what: string, password: string): void {
  io.err(`${what} follows; it is shown only now\n`);
  io.out(`${password}\n`);
}

/**
 * After a reset, DATA_DIR/bootstrap-admin-password no longer works when it held the password just replaced:
 * it is removed, so nobody reads a stale secret from it.
 */
async function forgetBootstrapPassword(io: CliIo, oldHash: string | null): Promise<void> {
  const { DATA_DIR } = loadConfig(databaseEnv, io.env);
  const file = path.resolve(DATA_DIR, BOOTSTRAP_PASSWORD_FILE);
  let kept: string;
  try {
    kept = fs.readFileSync(file, 'utf8').split(/\r?\n/)[0];
  } catch {
    return;
  }
  if (oldHash && kept && (await verifyPassword(kept, oldHash))) {
    fs.rmSync(file, { force: true });
    io.err(`removed ${file}: it held the password just replaced\n`);
  }
}
