import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { authzV1, orgsTeamsV1 } from '@platform/proto';
import { createClient } from '@platform/service-kit';
import { cli, cliProcess, startApps, type Apps } from './helpers';

/**
 * The admin CLI on the embedded database (PGlite under DATA_DIR), which one process uses at a time: the
 * bootstrap password file, the refusal while the platform runs, and recovering a lost bootstrap password.
 */
describe('admin CLI on the embedded database (DATA_DIR)', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'platform-cli-embedded-'));
  const env = { DATA_DIR: dataDir, LOG_LEVEL: 'silent', PLATFORM_ADMIN_ORG: 'none' };
  const passwordFile = path.join(fs.realpathSync(dataDir), 'bootstrap-admin-password');
  let platform: Apps | undefined;
  let bootstrapPassword = '';

  afterAll(async () => {
    await platform?.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  /** Asks the running orgs-teams to authenticate with a password, through its RPC. */
  async function signIn(username: string, password: string): Promise<orgsTeamsV1.User | undefined> {
    const client = createClient(orgsTeamsV1.OrgsTeamsServiceService, platform!.addresses.ORGS_TEAMS_GRPC_ADDR, { name: 'orgs-teams' });
    try {
      return (await client.authenticateBasic({ username, password })).user;
    } catch {
      return undefined;
    } finally {
      client.close();
    }
  }

  it('refuses the identity commands on a DATA_DIR that has no database yet, and creates none', async () => {
    const run = await cli(['mint-token', 'admin', '--name', 'x'], env);
    expect(run.code).toBe(1);
    expect(run.err).toBe(
      `platform-cli: there is no database under ${path.resolve(dataDir)} (DATA_DIR): start the platform once or run \`migrate\`, or set DATA_DIR or DATABASE_URL to where the data is\n`,
    );
    expect(fs.existsSync(path.join(dataDir, 'postgres'))).toBe(false);
  });

  it('migrate creates the embedded database with every schema; again it finds nothing to do', async () => {
    const first = await cli(['migrate'], env);
    expect(first.code).toBe(0);
    expect(first.out).toMatch(/^identity: applied \d+ /m);
    const again = await cli(['migrate'], env);
    expect(again.code).toBe(0);
    expect(again.out).not.toContain('applied');
  }, 120_000);

  it('the first start keeps the generated password in DATA_DIR/bootstrap-admin-password (0600), moves an old file aside, and says where', async () => {
    fs.writeFileSync(passwordFile, 'from-an-earlier-database\n');
    const banner: string[] = [];
    const write = jest
      .spyOn(process.stderr, 'write')
      .mockImplementation((chunk: string | Uint8Array) => (banner.push(String(chunk)), true));
    try {
      platform = await startApps(['authz', 'orgs-teams'], env);
    } finally {
      write.mockRestore();
    }
    const text = banner.join('');
    bootstrapPassword = /generated password: (\S+)/.exec(text)![1];
    expect(text).toContain(`It is also in ${passwordFile}, readable only by its owner.`);
    expect(text).toContain('Lost it? npm run -s cli -- reset-password admin.');
    expect(fs.readFileSync(passwordFile, 'utf8')).toBe(`${bootstrapPassword}\n`);
    expect(fs.statSync(passwordFile).mode & 0o777).toBe(0o600);
    const [aside] = fs.readdirSync(path.dirname(passwordFile)).filter((f) => f.startsWith('bootstrap-admin-password.replaced-'));
    expect(text).toContain(`The earlier file there was kept as ${path.join(path.dirname(passwordFile), aside)}.`);
    expect(fs.readFileSync(path.join(path.dirname(passwordFile), aside), 'utf8')).toBe('from-an-earlier-database\n');
    expect(await signIn('admin', bootstrapPassword)).toMatchObject({ login: 'admin', isAdmin: true });
  }, 120_000);

  it('while the platform runs on the DATA_DIR, the CLI in another process refuses with exit 75 naming its pid', async () => {
    // Two other processes side by side: `reset-password` refused, `check` reading the lock as the platform's.
    const [refused, checked] = await Promise.all([cliProcess(['reset-password', 'admin'], env), cliProcess(['check'], env)]);
    expect(refused.code).toBe(75);
    expect(refused.out).toBe('');
    expect(refused.err).toMatch(
      new RegExp(
        `^platform-cli: the embedded database under .+ \\(DATA_DIR\\) is in use by a running platform \\(pid ${process.pid}, started [^)]+\\): ` +
          `stop the platform first \\(pid ${process.pid}\\)\\n$`,
      ),
    );
    // `check` reads the lock as the platform using its database, which is fine.
    expect(checked).toMatchObject({ code: 0, err: '' });
    expect(checked.out).toContain(`in use by the running platform (pid ${process.pid})`);
    expect(fs.readFileSync(passwordFile, 'utf8')).toBe(`${bootstrapPassword}\n`);
  }, 60_000);

  it('a lost bootstrap password: stop, reset-password, start again; the stale file is removed; create-admin and mint-token work too', async () => {
    await platform!.stop();
    platform = undefined;

    // The reset and the new admin with its token are independent of each other: side by side, in this one process.
    const [reset, [created, minted]] = await Promise.all([
      cli(['reset-password', 'admin', '--password-stdin'], env, 'admin-new-password\n'),
      (async () => {
        const c = await cli(['create-admin', '--username', 'ops', '--email', 'ops@example.com'], env);
        return [c, await cli(['mint-token', 'ops', '--name', 'automation'], env)] as const;
      })(),
    ]);
    expect(reset).toMatchObject({ code: 0, out: '' });
    expect(reset.err).toContain(`removed ${passwordFile}: it held the password just replaced`);
    expect(fs.existsSync(passwordFile)).toBe(false);

    expect(created.code).toBe(0);
    const opsPassword = created.out.trim();
    expect(minted.code).toBe(0);
    const token = minted.out.trim();

    platform = await startApps(['authz', 'orgs-teams'], { ...env, PLATFORM_ADMIN_PASSWORD: 'not-used-admin-exists' });
    expect(await signIn('admin', 'admin-new-password')).toMatchObject({ login: 'admin' });
    expect(await signIn('admin', bootstrapPassword)).toBeUndefined();
    const ops = await signIn('ops', opsPassword);
    expect(ops).toMatchObject({ login: 'ops', isAdmin: true });

    const orgsTeams = createClient(orgsTeamsV1.OrgsTeamsServiceService, platform.addresses.ORGS_TEAMS_GRPC_ADDR, { name: 'orgs-teams' });
    const authz = createClient(authzV1.AuthzServiceService, platform.addresses.AUTHZ_GRPC_ADDR, { name: 'authz' });
    try {
      expect((await orgsTeams.authenticate({ token })).user).toMatchObject({ login: 'ops' });
      const site = await authz.check({
        tuple: { user: `user:${ops!.id}`, relation: 'admin', object: 'site:platform' },
        contextualTuples: [],
      });
      expect(site.allowed).toBe(true);
    } finally {
      orgsTeams.close();
      authz.close();
    }
  }, 120_000);
});
