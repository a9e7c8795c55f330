import { promises as fs } from 'node:fs';
import { Command, CommanderError } from 'commander';
import { LicenseRejectedError, trustedAuthority, verifyLicense, type TrustedAuthority } from '@platform/app-contracts-licensing/licensing';
import { CliError, EXIT, type CliIo } from './io';

const NAME = 'license';

/** Exit codes of `npm run license` beyond the admin CLI's (sysexits). */
export const LICENSE_EXIT = {
  ...EXIT,
  /** The CA or CRL file is not what it should be (not a certificate, not a CRL signed by that CA). */
  dataErr: 65,
  /** A file cannot be read. */
  noInput: 66,
} as const;

const HELP = `
The license file may be DER, PEM or base64 of DER (the License answer's \`license\`), and so may the CA
certificate (--ca, else LICENSE_CA_CERT) and the revocation list (--crl, from GET /api/v1/licenses/crl).
The checks are /register's: signed by that CA, DNS name = --cluster, extended key usage clientAuth,
valid now, one of --features licensed, serial not on the revocation list. Nothing is sent anywhere.

Exit codes: 0 valid; 1 refused (the reason follows "refused"); 64 wrong arguments; 65 the CA or the
revocation list is not usable; 66 a file cannot be read. See docs/licensing.md.`;

interface VerifyOptions {
  cluster: string;
  features?: string;
  crl?: string;
  ca?: string;
}

/** `license verify`: checks one license offline exactly as `/register` does and says why when it refuses it. */
async function verify(file: string, opts: VerifyOptions, io: CliIo): Promise<number> {
  const caText = opts.ca === undefined ? io.env.LICENSE_CA_CERT : await read(opts.ca);
  if (!caText) throw new CliError('the platform CA certificate is needed: --ca <ca.pem> (or LICENSE_CA_CERT)', EXIT.usage);
  let authority: TrustedAuthority;
  try {
    authority = trustedAuthority(caText);
  } catch (err) {
    throw new CliError(`${opts.ca ?? 'LICENSE_CA_CERT'}: ${(err as Error).message}`, LICENSE_EXIT.dataErr);
  }
  const license = await read(file);
  const crl = opts.crl === undefined ? undefined : await read(opts.crl);
  const features = opts.features
    ?.split(',')
    .map((f) => f.trim())
    .filter(Boolean);
  try {
    const valid = await verifyLicense(license, { clusterUID: opts.cluster, features, crl }, authority);
    io.out(
      `valid: license ${valid.serial} for cluster ${valid.clusterUID}\n` +
        `  product line ${valid.productLine ?? ''}, tier ${valid.tier ?? ''}, plan ${valid.plan ?? ''}, owner ${valid.email ?? ''}\n` +
        `  features ${valid.features.join(', ')}\n` +
        `  flags ${valid.flags.join(', ')}\n` +
        `  valid ${valid.notBefore.toISOString()} to ${valid.notAfter.toISOString()}` +
        `${crl === undefined ? ' (no revocation list given: revocation not checked)' : ''}\n`,
    );
    return EXIT.ok;
  } catch (err) {
    if (err instanceof LicenseRejectedError) {
      io.err(`${NAME}: refused (${err.reason}): ${err.message}\n`);
      return EXIT.failed;
    }
    // Only the revocation list can fail otherwise: not a CRL, or not signed by the CA.
    throw new CliError(`${opts.crl}: ${(err as Error).message}`, LICENSE_EXIT.dataErr);
  }
}

async function read(file: string): Promise<Buffer> {
  try {
    return await fs.readFile(file);
  } catch (err) {
    throw new CliError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, LICENSE_EXIT.noInput);
  }
}

function program(io: CliIo, setExit: (code: number) => void): Command {
  const cli = new Command(NAME)
    .description('Check platform licenses offline, without the platform.')
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.out(s), writeErr: (s) => io.err(s) })
    .showHelpAfterError(`(${NAME} --help lists the commands)`)
    .addHelpText('after', HELP);
  cli
    .command('verify')
    .description("Verify a license file for a cluster, as the platform's POST /register does.")
    .argument('<file>', 'the license: DER, PEM or base64')
    .requiredOption('--cluster <uid>', 'the UID of the cluster the license is presented for')
    .option('--features <a,b>', 'requested features, comma-separated: at least one must be licensed')
    .option('--crl <file>', 'the revocation list (DER or PEM) to check the serial against')
    .option('--ca <ca.pem>', 'the platform CA certificate (default: LICENSE_CA_CERT)')
    .addHelpText('after', HELP)
    .action(async (file: string, opts: VerifyOptions) => setExit(await verify(file, opts, io)));
  return cli;
}

/** Runs `npm run license -- <argv>` and answers the exit code; failures are one line on `io.err`. */
export async function runLicenseCli(argv: string[], io: CliIo): Promise<number> {
  let exitCode: number = EXIT.ok;
  try {
    await program(io, (code) => (exitCode = code)).parseAsync(argv, { from: 'user' });
    return exitCode;
  } catch (err) {
    if (err instanceof CommanderError)
      return err.code === 'commander.helpDisplayed' || err.code === 'commander.help' ? EXIT.ok : EXIT.usage;
    if (err instanceof CliError) {
      io.err(`${NAME}: ${err.message}\n`);
      return err.exitCode;
    }
    io.err(`${NAME}: unexpected error: ${(err as Error)?.message?.split('\n')[0] ?? String(err)}\n`);
    return EXIT.software;
  }
}
