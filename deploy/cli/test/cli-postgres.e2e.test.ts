import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import pg from 'pg';
import { createTestDatabase, freePort, testNatsUrl } from '@platform/testing';
import { APPS } from '../src/apps';
import { api, basic, cli, startApps, type Apps } from './helpers';

/**
 * The admin CLI against a real Postgres (DATABASE_URL): it runs beside a platform started on the same
 * database, and what it does is seen by that platform over HTTP.
 */
describe('admin CLI on Postgres (DATABASE_URL)', () => {
  let db: { url: string; drop(): Promise<void> };
  let env: Record<string, string>;
  let platform: Apps | undefined;
  /** A session on the test database, to look at what the commands wrote. */
  let sql: pg.Client;

  beforeAll(async () => {
    db = await createTestDatabase();
    env = {
      DATABASE_URL: db.url,
      DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'platform-cli-')),
      NATS_URL: await testNatsUrl(),
      LOG_LEVEL: 'silent',
    };
    sql = new pg.Client({ connectionString: db.url });
    await sql.connect();
  });
  afterAll(async () => {
    await platform?.stop();
    await sql?.end();
    await db?.drop();
  });

  const schemas = async () =>
    (
      await sql.query<{ name: string }>(
        `select schema_name as name from information_schema.schemata where schema_name not like 'pg_%' and schema_name <> 'information_schema' order by 1`,
      )
    ).rows.map((r) => r.name);

  it('migrate applies every app’s migrations, then finds nothing to do', async () => {
    const first = await cli(['migrate'], env);
    expect(first.code).toBe(0);
    for (const { database } of APPS.filter((a) => a.database)) {
      expect(first.out).toContain(`${database!.schema}: applied ${database!.migrations.length} `);
      const { rows } = await sql.query(`select name from ${database!.schema}.knex_migrations order by id`);
      expect(rows.map((r) => r.name)).toEqual(database!.migrations.map((m) => m.name));
    }
    // Each schema is named once, on its stdout line; stderr only says where.
    expect(first.out.trim().split('\n')).toHaveLength(APPS.filter((a) => a.database).length);
    expect(first.err.trim().split('\n')).toEqual([expect.stringMatching(/^migrating /)]);

    const again = await cli(['migrate'], env);
    expect(again.code).toBe(0);
    expect(again.out.trim().split('\n')).toHaveLength(APPS.filter((a) => a.database).length);
    expect(again.out).not.toContain('applied');
    expect(again.out).toContain('identity: up to date');
  });

  it('create-admin makes a site admin (password from stdin) before the platform ever started', async () => {
    const run = await cli(['create-admin', '--username', 'ops', '--email', 'ops@example.com', '--password-stdin'], env, 'ops-password-1\n');
    expect(run).toMatchObject({ code: 0, out: '' });
    expect(run.err).toContain('created site admin "ops"');
    const { rows } = await sql.query(`select is_admin from identity.accounts where login = 'ops'`);
    expect(rows).toEqual([{ is_admin: true }]);
    const tuples = await sql.query(
      `select object_type, object_id, relation, user_type from authz.tuples where relation = 'admin' and object_type = 'site'`,
    );
    expect(tuples.rows).toEqual([{ object_type: 'site', object_id: 'platform', relation: 'admin', user_type: 'user' }]);
  });

  it('a platform started on the migrated database uses the same schemas and creates no other', async () => {
    const before = await schemas();
    platform = await startApps(
      APPS.map((a) => a.app.name),
      { ...env, PLATFORM_ADMIN_USERNAME: 'root', PLATFORM_ADMIN_PASSWORD: 'root-password' },
    );
    expect(await schemas()).toEqual(before);
    expect(before).toEqual(expect.arrayContaining(APPS.filter((a) => a.database).map((a) => a.database!.schema)));
    // ops is a site admin already, so no bootstrap admin was made.
    expect((await sql.query(`select login from identity.accounts where type = 0`)).rows).toEqual([{ login: 'ops' }]);
  });

  it('mint-token prints a token that authenticates, and the site admin can create users with it', async () => {
    const run = await cli(['mint-token', 'ops', '--name', 'automation'], env);
    expect(run.code).toBe(0);
    const token = run.out.trim();
    expect(token).toMatch(/^[0-9a-f]{40}$/);
    expect(run.err).toContain('token "automation"');
    expect(run.err).not.toContain(token);
    const me = await api(platform!.url, 'GET', '/user', { token });
    expect(me).toMatchObject({ status: 200, body: { login: 'ops', is_admin: true } });
    const created = await api(platform!.url, 'POST', '/admin/users', {
      token,
      json: { username: 'bob', email: 'bob@example.com', password: 'bob-password' },
    });
    expect(created.status).toBe(201);

    const taken = await cli(['mint-token', 'ops', '--name', 'automation'], env);
    expect(taken).toEqual({ code: 1, out: '', err: 'platform-cli: access token name "automation" is already used\n' });
    const nobody = await cli(['mint-token', 'nobody', '--name', 'x'], env);
    expect(nobody).toEqual({ code: 1, out: '', err: 'platform-cli: user nobody does not exist\n' });
  });

  it('create-admin beside the running platform: the generated password is printed once and the admin acts at once', async () => {
    const run = await cli(['create-admin', '--username', 'ops2', '--email', 'ops2@example.com'], env);
    expect(run.code).toBe(0);
    const password = run.out.trim();
    expect(password).toMatch(/^[A-Za-z0-9_-]{24}$/);
    expect(run.err).not.toContain(password);
    const token = await api(platform!.url, 'POST', '/users/ops2/tokens', { authorization: basic('ops2', password), json: { name: 'x' } });
    expect(token.status).toBe(201);
    const created = await api(platform!.url, 'POST', '/admin/users', {
      token: token.body.sha1,
      json: { username: 'carol', email: 'carol@example.com', password: 'carol-password' },
    });
    expect(created.status).toBe(201);

    const again = await cli(['create-admin', '--username', 'OPS2', '--email', 'other@example.com', '--password', 'long-enough'], env);
    expect(again).toEqual({ code: 1, out: '', err: 'platform-cli: user OPS2 already exists\n' });
    const short = await cli(['create-admin', '--username', 'dave', '--email', 'dave@example.com', '--password', 'short'], env);
    expect(short).toEqual({ code: 1, out: '', err: 'platform-cli: password: at least 8 characters\n' });
  });

  it('reset-password: Basic auth works with the new password only, and must_change_password is as asked', async () => {
    const tokenWith = (password: string) =>
      api(platform!.url, 'POST', '/users/bob/tokens', { authorization: basic('bob', password), json: { name: `t-${Math.random()}` } });
    expect((await tokenWith('bob-password')).status).toBe(201);

    const given = await cli(['reset-password', 'bob', '--password-stdin', '--must-change-password'], env, 'bob-new-password\n');
    expect(given).toMatchObject({ code: 0, out: '' });
    expect(given.err).toContain('must be changed at next sign-in');
    expect((await tokenWith('bob-new-password')).status).toBe(201);
    expect((await tokenWith('bob-password')).status).toBe(401);
    const flag = () =>
      sql.query(`select must_change_password as must from identity.accounts where login = 'bob'`).then((r) => r.rows[0].must);
    expect(await flag()).toBe(true);

    const generated = await cli(['reset-password', 'BOB'], env);
    expect(generated.code).toBe(0);
    const password = generated.out.trim();
    expect(password).toHaveLength(24);
    expect((await tokenWith(password)).status).toBe(201);
    expect((await tokenWith('bob-new-password')).status).toBe(401);
    expect(await flag()).toBe(false);

    expect(await cli(['reset-password', 'nobody', '--password', 'long-enough'], env)).toEqual({
      code: 1,
      out: '',
      err: 'platform-cli: user nobody does not exist\n',
    });
    const both = await cli(['reset-password', 'bob', '--password', 'long-enough', '--password-stdin'], env, 'x\n');
    expect(both).toMatchObject({ code: 64, err: 'platform-cli: give either --password or --password-stdin, not both\n' });
  });

  it('check passes with every dependency up and names each unreachable one on a line of its own', async () => {
    const ok = await cli(['check'], { ...env, ...platform!.addresses });
    expect(ok.err).toBe('');
    expect(ok.code).toBe(0);
    const lines = ok.out.trim().split('\n');
    expect(lines).toHaveLength(2 + Object.keys(platform!.addresses).length);
    expect(lines.every((l) => l.startsWith('ok  '))).toBe(true);
    expect(ok.out).toMatch(/^ok {4}database: postgres at .+ \(DATABASE_URL\), server \d+/m);
    expect(ok.out).toMatch(/^ok {4}NATS: .+ \(NATS_URL\), JetStream available$/m);
    expect(ok.out).toMatch(/^ok {4}authz at 127\.0\.0\.1:\d+ \(AUTHZ_GRPC_ADDR\), SERVING$/m);

    const closed = await freePort();
    const down = await cli(['check'], {
      ...env,
      DATABASE_URL: `postgres://postgres:s3cret@127.0.0.1:${closed}/nothing`,
      NATS_URL: '',
      CLUSTERS_GRPC_ADDR: `127.0.0.1:${closed}`,
    });
    expect(down.code).toBe(69);
    expect(down.out).toContain(
      `FAIL  database: cannot connect to postgres at 127.0.0.1:${closed}/nothing (DATABASE_URL): connection refused\n`,
    );
    expect(down.out).toMatch(new RegExp(`^FAIL {2}clusters at 127\\.0\\.0\\.1:${closed} \\(CLUSTERS_GRPC_ADDR\\): .+$`, 'm'));
    expect(down.out).not.toContain('s3cret');
    expect(down.err).toBe('2 of 2 dependencies cannot be used\n');
  });

  it('an unreachable database stops the other commands with one line and exit 69', async () => {
    const closed = await freePort();
    const run = await cli(['mint-token', 'ops', '--name', 'x'], {
      ...env,
      DATABASE_URL: `postgres://postgres:s3cret@127.0.0.1:${closed}/x`,
    });
    expect(run).toEqual({
      code: 69,
      out: '',
      err: `platform-cli: cannot use postgres at 127.0.0.1:${closed}/x (DATABASE_URL): connection refused\n`,
    });
  });

  it('config prints every app’s settings with the secrets masked', async () => {
    const secrets = {
      DATABASE_URL: 'postgres://platform:db-secret-1@db.internal:5432/platform?sslmode=require',
      NATS_URL: 'nats://nats-token-2@nats.internal:4222',
      PLATFORM_ADMIN_PASSWORD: 'admin-secret-3',
      SECRETS_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64'),
      OPENFGA_API_URL: 'http://fga.internal:8080',
      OPENFGA_STORE_ID: '01HZZZZZZZZZZZZZZZZZZZZZZZ',
      OPENFGA_API_TOKEN: 'fga-secret-4',
      OBJECT_STORAGE_SECRET_ACCESS_KEY: 's3-secret-5',
      MARKETPLACE_API_SECRET: 'marketplace-secret-6',
    };
    const run = await cli(['config'], { ...secrets, HTTP_PORT: '9090' });
    expect(run.code).toBe(0);
    for (const value of Object.values(secrets).filter((v) => /secret|token|AAAA|Bwc/.test(v))) expect(run.out).not.toContain(value);
    expect(run.out).toContain('DATABASE_URL=postgres://platform:********@db.internal:5432/platform?********\n');
    expect(run.out).toContain('NATS_URL=nats://********@nats.internal:4222\n');
    expect(run.out).toContain('PLATFORM_ADMIN_PASSWORD=********\n');
    expect(run.out).toContain('OPENFGA_API_URL=http://fga.internal:8080\n');
    expect(run.out).toContain('HTTP_PORT=9090\n');
    expect(run.out).toContain('LOG_LEVEL=info  # default\n');
    for (const { app } of APPS) expect(run.out).toContain(`# ${app.name}\n`);

    const json = await cli(['config', '--app', 'orgs-teams', '--json'], secrets);
    expect(Object.keys(JSON.parse(json.out).apps)).toEqual(['orgs-teams']);
    expect(JSON.parse(json.out).apps['orgs-teams'].SECRETS_ENCRYPTION_KEY).toEqual({ value: '********', source: 'env' });

    const bad = await cli(['config', '--app', 'authz'], { OPENFGA_STORE_ID: 'not-a-ulid', DATABASE_URL: 'mysql://x' });
    expect(bad.code).toBe(78);
    expect(bad.err).toContain('authz: invalid configuration: OPENFGA_STORE_ID: must be an OpenFGA store id');
    expect(bad.err).toContain('DATABASE_URL: must be a postgres:// URL (got a value that is not shown)');
    expect((await cli(['config', '--app', 'nope'], {})).code).toBe(64);
  });

  it('usage errors exit 64 with the problem on stderr; --help exits 0', async () => {
    const unknown = await cli(['frobnicate'], env);
    expect(unknown.code).toBe(64);
    expect(unknown.err).toContain("unknown command 'frobnicate'");
    const missing = await cli(['mint-token', 'ops'], env);
    expect(missing.code).toBe(64);
    expect(missing.err).toContain("required option '--name <name>' not specified");
    const help = await cli(['--help'], env);
    expect(help.code).toBe(0);
    for (const command of ['create-admin', 'reset-password', 'mint-token', 'config', 'migrate', 'check'])
      expect(help.out).toContain(command);
    expect(help.out).toContain('Exit codes:');
    const commandHelp = await cli(['reset-password', '--help'], env);
    expect(commandHelp.code).toBe(0);
    expect(commandHelp.out).toContain('--must-change-password');
  });
});
