import { Command, CommanderError } from 'commander';
import { DomainError } from '@platform/errors';
import { ConfigError, PLATFORM_VERSION } from '@platform/service-kit';
import { CliError, EXIT, type CliIo } from './io';

const NAME = 'platform-cli';

const EXIT_CODES_HELP = `
Configuration comes from the same environment variables the apps read (DATABASE_URL or DATA_DIR,
NATS_URL, OPENFGA_*, ...; docs/configuration.md). On the embedded database (no DATABASE_URL) stop the
platform first: the CLI takes the same DATA_DIR lock.

Exit codes: 0 done; 1 the command failed (no such user, name taken, ...); 64 wrong arguments;
65 an archive that is damaged or no backup; 66 a file that cannot be read; 69 a dependency cannot be used;
70 a fault in the CLI; 75 the platform runs on this DATA_DIR; 78 invalid configuration. See docs/operations.md
and docs/backup.md.`;

/**
 * The program: one command per operation, usage errors and help through `io`, never process.exit. Each command's
 * module is loaded when the command runs, so `--help`, `--version` and a usage error load none of the apps and
 * their packages (the bundle keeps those modules uninitialised until then).
 */
function program(io: CliIo, setExit: (code: number) => void): Command {
  const cli = new Command(NAME)
    .description(
      'Administer the platform: site admins, passwords, tokens, configuration, migrations, dependencies, OpenFGA, backups, imports.',
    )
    .version(PLATFORM_VERSION)
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.out(s), writeErr: (s) => io.err(s) })
    .showHelpAfterError(`(${NAME} --help lists the commands)`)
    .addHelpText('after', EXIT_CODES_HELP);
  const done = (code: number) => setExit(code);

  cli
    .command('create-admin')
    .description('Create a user who is a site admin. Without --password a password is generated and printed once (on stdout).')
    .requiredOption('--username <login>', 'login of the new admin')
    .requiredOption('--email <address>', 'email address of the new admin')
    .option('--full-name <name>', 'full name', 'Site administrator')
    .option('--password <password>', 'the password (visible to other local users in the process list: prefer --password-stdin)')
    .option('--password-stdin', 'read the password from the first line of standard input')
    .action(async (opts) => done(await (await import('./identity-commands')).createAdmin(opts, io)));

  cli
    .command('reset-password')
    .description(
      "Set a user's password. Without --password one is generated and printed once (on stdout). Clears " +
        '"must change password" unless --must-change-password is given.',
    )
    .argument('<username>', 'login of the user')
    .option('--password <password>', 'the new password (visible in the process list: prefer --password-stdin)')
    .option('--password-stdin', 'read the new password from the first line of standard input')
    .option('--must-change-password', 'mark the password to be changed at next sign-in')
    .action(async (username: string, opts) => done(await (await import('./identity-commands')).resetPassword(username, opts, io)));

  cli
    .command('mint-token')
    .description('Create a personal access token for a user and print it once (on stdout).')
    .argument('<username>', 'login of the user')
    .requiredOption('--name <name>', 'name of the token (unique per user)')
    .action(async (username: string, opts) => done(await (await import('./identity-commands')).mintToken(username, opts, io)));

  cli
    .command('config')
    .description("Print each app's effective configuration from this environment, secrets masked.")
    .option('--app <name>', 'only this app')
    .option('--json', 'as JSON')
    .action(async (opts) => done((await import('./config-command')).showConfig(opts, io)));

  cli
    .command('migrate')
    .description("Apply every app's pending database migrations and exit.")
    .action(async () => done(await (await import('./migrate-command')).migrate(io)));

  cli
    .command('check')
    .description('Check that every configured dependency is reachable: database, NATS, OpenFGA, object storage, backends.')
    .action(async () => done(await (await import('./check-command')).check(io)));

  cli
    .command('setup-openfga')
    .description(
      'Make the OpenFGA server (OPENFGA_API_URL) ready for authz: find the store (OPENFGA_STORE_ID, or by --store-name, ' +
        "created when missing), write the platform's authorization model when the store's latest differs, and print the " +
        "store's id. Running it again changes nothing.",
    )
    .option('--store-name <name>', 'the store to find or create (when OPENFGA_STORE_ID is not set)')
    .option('--configmap <name>', "inside a pod: also record OPENFGA_STORE_ID in this ConfigMap of the pod's namespace")
    .action(async (opts) => done(await (await import('./openfga-setup-command')).setupOpenFga(opts, io)));

  cli
    .command('import')
    .description(
      'Import organizations with their teams, members and custom roles from a JSON or CSV file into the running platform ' +
        "(POST /admin/orgs/import with a site admin's token in PLATFORM_TOKEN), in batches, with progress. Members must be " +
        'existing users. Running it again changes nothing; a run cut short resumes where it stopped. See docs/import.md.',
    )
    .argument('<file>', 'the file to import')
    .option('--format <format>', 'json or csv (default: by the file name, else json)')
    .option('--url <url>', "the platform's address (default: PLATFORM_URL, else PUBLIC_URL, else http://localhost:8080/)")
    .option('--token-stdin', 'read the token from the first line of standard input instead of PLATFORM_TOKEN')
    .option('--batch-size <memberships>', 'memberships per request (whole organizations; default 5000)')
    .option('--concurrency <n>', 'requests in flight at once (default 2)')
    .option('--restart', 'send every batch again, ignoring the resume point of an earlier run')
    .action(async (file: string, opts) => done(await (await import('./import-command')).importOrgs(file, opts, io)));

  const collect = (value: string, previous: string[] = []) => [...previous, value];
  cli
    .command('backup')
    .description(
      'Write one encrypted archive of everything the platform needs to come back: the database (every app schema, one ' +
        'snapshot), the object store and the key material, with a manifest of the version and migrations. Embedded database: ' +
        'stop the platform first; with DATABASE_URL it runs beside it. --to writes platform-<time>.age into a directory ' +
        'or an S3 bucket (BACKUP_S3_* settings) and applies retention there. See docs/backup.md.',
    )
    .argument('[file]', 'the archive to write (never replaces a file); or give --to')
    .option('--passphrase-file <file>', 'encrypt with the passphrase on the first line of this file (else BACKUP_PASSPHRASE)')
    .option('--passphrase-stdin', 'read the passphrase from the first line of standard input')
    .option('--recipient <public-key>', 'encrypt to this age public key (age1...) instead of a passphrase (repeatable)', collect)
    .option('--format <format>', 'database format: rows (either engine) or pg_dump (DATABASE_URL; the default when pg_dump is installed)')
    .option('--to <destination>', 'a directory or s3://bucket/prefix: write platform-<time>.age there instead of <file>')
    .option('--keep <n>', 'with --to: then delete all but the newest n archives there')
    .option('--keep-days <days>', 'with --to: then delete the archives there older than this many days')
    .action(async (file: string | undefined, opts) => done(await (await import('./backup/backup-command')).backup(file, opts, io)));

  cli
    .command('restore')
    .description(
      'Restore an archive into an empty DATA_DIR or database, then apply the migrations of this version. A non-empty target ' +
        'is refused unless --force, which replaces it; one an interrupted restore left is refused until --resume. Stop the platform ' +
        'first. See docs/backup.md.',
    )
    .argument('<file>', 'the archive: a file, s3://bucket/key, or s3://bucket/prefix/ for the newest there')
    .option('--passphrase-file <file>', 'the passphrase, on the first line of this file (else BACKUP_PASSPHRASE)')
    .option('--passphrase-stdin', 'read the passphrase from the first line of standard input')
    .option('--identity <file>', 'an age identity file (AGE-SECRET-KEY-1...) of a recipient (repeatable)', collect)
    .option('--force', 'replace the data already in the target')
    .option('--resume', 'restore again, from the start, over the target an interrupted restore left (it is marked unfinished)')
    .option(
      '--new-installation',
      "make the target an installation of its own (new namespace on NATS) instead of the archive's: for a copy beside the original",
    )
    .action(async (file: string, opts) => done(await (await import('./backup/restore-command')).restore(file, opts, io)));

  cli
    .command('backup-info')
    .description('Read a whole archive and print its manifest and summary (JSON); --show-keys prints the keys it keeps as NAME=value.')
    .argument('<file>', 'the archive: a file, s3://bucket/key, or s3://bucket/prefix/ for the newest there')
    .option('--passphrase-file <file>', 'the passphrase, on the first line of this file (else BACKUP_PASSPHRASE)')
    .option('--passphrase-stdin', 'read the passphrase from the first line of standard input')
    .option('--identity <file>', 'an age identity file of a recipient (repeatable)', collect)
    .option('--show-keys', 'print the key settings and key files it keeps (secrets: mind where stdout goes)')
    .action(async (file: string, opts) => done(await (await import('./backup/info-command')).backupInfo(file, opts, io)));

  return cli;
}

/**
 * Runs the CLI on `argv` (the arguments after the program name) and answers the exit code. Every failure is
 * one line on `io.err` (`platform-cli: ...`), never a stack trace; secrets are written only to `io.out`.
 */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  let exitCode: number = EXIT.ok;
  try {
    await program(io, (code) => (exitCode = code)).parseAsync(argv, { from: 'user' });
    return exitCode;
  } catch (err) {
    if (err instanceof CommanderError) {
      // Commander has already written its message (and the help, when asked for).
      return err.code === 'commander.helpDisplayed' || err.code === 'commander.version' ? EXIT.ok : EXIT.usage;
    }
    const [message, code] = describe(err);
    io.err(`${NAME}: ${message}\n`);
    return code;
  }
}

/** The one line and exit code of a failure. */
function describe(err: unknown): [string, number] {
  if (err instanceof CliError) return [err.message, err.exitCode];
  if (err instanceof ConfigError) return [`invalid configuration: ${err.problems.join('; ')}`, EXIT.config];
  if (err instanceof DomainError) {
    return [err.message, err.kind === 'unavailable' || err.kind === 'deadline' ? EXIT.unavailable : EXIT.failed];
  }
  const message = (err as Error)?.message?.split('\n')[0] ?? String(err);
  // The database went away in the middle of a command.
  if (/^(ECONN|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|57P)/.test(String((err as { code?: unknown })?.code))) {
    return [`the database connection failed: ${message}`, EXIT.unavailable];
  }
  return [`unexpected error: ${message}`, EXIT.software];
}
