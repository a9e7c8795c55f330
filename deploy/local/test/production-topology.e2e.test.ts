// The production topology: the BUILT bundles, one process per app, staged as the image
// holds them (the runtime stage's COPY lines of deploy/docker/Dockerfile) and started through the image's
// entrypoint, with the environment the Helm chart gives each pod (rendered by `helm template` with its default
// values and only the database, NATS and the site admin set), against the real Postgres and NATS. The chart's migration Job runs first. Then a client's flow through the gateway; authz
// is killed with SIGKILL: only its routes answer 503, the other apps keep answering; restarted, its routes
// recover and every acknowledged write is still there.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { status } from '@grpc/grpc-js';
import { orgsTeamsOrgsV1 } from '@platform/proto';
import { callAsStranger } from '@platform/service-testing';
import { createTestDatabase, eventually, freePort, testNatsUrl } from '@platform/testing';
import { APPS, containerEnv, find, helmTemplate, ROOT, type AppName, type Manifest } from './chart';
import { buildDocumentedStubs, documentedBlock, PythonClient, pythonClientAvailable, runPython } from './python-client';

const ADMIN_PASSWORD = 'topology-admin-password';
const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

/** The runtime stage of deploy/docker/Dockerfile: what the image holds, as [from build stage, to] paths. */
function imageFiles(): [string, string][] {
  const dockerfile = fs.readFileSync(path.join(ROOT, 'deploy/docker/Dockerfile'), 'utf8');
  const runtime = dockerfile.slice(dockerfile.search(/^FROM \S+ AS runtime$/m));
  expect(runtime).toMatch(/^COPY --from=runtime-deps \/app\/node_modules \.\/node_modules$/m);
  // From the build stage, or from its bundles (the same files, less their source maps and metafiles).
  const copies = [...runtime.matchAll(/^COPY --from=(?:build|bundles) \/src\/(\S+) \.\/(\S+)$/gm)].map((c): [string, string] => [c[1], c[2]]);
  expect(copies.map(([from]) => from)).toEqual(
    expect.arrayContaining(['package.json', 'dist/apps', 'proto', 'deploy/docker/entrypoint.sh']),
  );
  return copies;
}

/**
 * Rebuilds the bundles the image copies (every app's, and any other dist/<project root>) that are missing or
 * older than a file esbuild made them from (its metafile), as their Nx build targets do.
 */
function ensureBundles(copies: [string, string][]): void {
  const bundles: { name: string; entry: string; out: string }[] = APPS.map((app) => ({
    name: app,
    entry: `apps/${app}/src/main.ts`,
    out: `dist/apps/${app}/main.js`,
  }));
  for (const [from] of copies) {
    if (!from.startsWith('dist/') || from === 'dist/apps') continue;
    const projectRoot = from.slice('dist/'.length);
    bundles.push({ name: path.basename(projectRoot), entry: `${projectRoot}/src/main.ts`, out: `${from}/main.js` });
  }
  for (const { name, entry, out } of bundles) {
    const bundle = path.join(ROOT, out);
    const meta = `${bundle}.meta.json`;
    const fresh =
      fs.existsSync(bundle) &&
      fs.existsSync(meta) &&
      Object.keys(JSON.parse(fs.readFileSync(meta, 'utf8')).inputs as Record<string, unknown>).every((input) => {
        const file = path.join(ROOT, input);
        return fs.existsSync(file) && fs.statSync(file).mtimeMs <= fs.statSync(bundle).mtimeMs;
      });
    if (fresh) continue;
    const res = spawnSync(process.execPath, [path.join(ROOT, 'deploy/docker/bundle.js'), name, entry], { cwd: ROOT, encoding: 'utf8' });
    if (res.status !== 0) throw new Error(`bundling ${name} failed:\n${res.stdout}${res.stderr}`);
  }
}

/**
 * A directory laid out as the image's /app: the paths the Dockerfile's runtime stage copies from the build
 * stage, and node_modules (the image's production-only install; the bundler refuses a bundle that needs more).
 */
function stageImage(dir: string, copies: [string, string][]): void {
  for (const [from, to] of copies) fs.cpSync(path.join(ROOT, from), path.join(dir, to), { recursive: true });
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
}

/** One app's process, its output kept for failure messages. */
interface AppProcess {
  child: ChildProcess;
  output(): string;
  exited: Promise<number | null>;
}

function run(entrypoint: string, args: string[], env: NodeJS.ProcessEnv, cwd: string): AppProcess {
  // The entrypoint execs node, so the child is the app's node process itself (as PID 1 in a container).
  const child = spawn('/bin/sh', [entrypoint, ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => out, exited };
}

describe('the production topology: built bundles as separate processes with the chart’s environment', () => {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'platform-topology-'));
  const image = path.join(work, 'app');
  const entrypoint = path.join(image, 'deploy/docker/entrypoint.sh');
  const running = new Map<AppName, AppProcess>();
  const envs = new Map<AppName, NodeJS.ProcessEnv>();
  let manifests: Manifest[];
  let dropDatabase: (() => Promise<void>) | undefined;
  let gateway = '';
  /** Each app's gRPC address on this machine, as another team's pod would reach its Service. */
  const grpcAddress = new Map<AppName, string>();

  const killAll = () => {
    for (const p of running.values()) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
  };
  // Should jest itself be stopped, no app outlives it.
  process.once('exit', killAll);

  const start = async (app: AppName): Promise<void> => {
    const proc = run(entrypoint, [app], envs.get(app)!, image);
    running.set(app, proc);
    const started = eventually(async () => proc.output().includes(`"msg":"${app} started"`), 60_000, 100);
    const failed = proc.exited.then((code) => {
      throw new Error(`${app} exited with ${code} before it started:\n${proc.output()}`);
    });
    await Promise.race([started, failed]).catch((err) => {
      throw new Error(`${app} did not start: ${(err as Error).message}\n${proc.output().slice(-4000)}`);
    });
  };

  beforeAll(async () => {
    const copies = imageFiles();
    ensureBundles(copies);
    fs.mkdirSync(image);
    stageImage(image, copies);

    const db = await createTestDatabase();
    dropDatabase = db.drop;
    // The chart rendered with its default values and only what an operator must give: the database, NATS, the
    // site admin and the apps' key.
    manifests = helmTemplate([
      '--set',
      `postgres.url=${db.url}`,
      '--set',
      `nats.url=${await testNatsUrl()}`,
      '--set',
      `platformAdmin.password=${ADMIN_PASSWORD}`,
      '--set',
      'platformAdmin.email=admin@example.com',
      // `helm template` cannot keep a generated key between renders, so the operator gives the apps' key.
      '--set',
      `appKeys.keys[0]=${randomBytes(32).toString('base64')}`,
    ]);

    /**
     * Ports, each pod's environment, the migration Job and every Deployment. Ports are picked free beforehand and
     * bound by the apps later: another test on this machine can take one in between, so a start that fails on a
     * port in use is tried again once on fresh ports.
     */
    const bringUp = async () => {
      // Loopback ports for what the chart gives fixed ports and Service names.
      const ports = new Map<string, number>();
      for (const app of APPS) {
        for (const kind of ['grpc', 'http', 'metrics']) ports.set(`${app}/${kind}`, await freePort());
      }
      const httpPortOf = (app: string) => find(manifests, 'Deployment', `platform-${app}`).spec.template.spec.containers[0].ports;
      const local = (value: string) =>
        value.replace(/platform-([a-z-]+):(\d+)/g, (_, app: string, port: string) => {
          const kind =
            port === '50051'
              ? 'grpc'
              : httpPortOf(app).some((p: any) => p.name === 'http' && String(p.containerPort) === port)
                ? 'http'
                : '?';
          const mapped = ports.get(`${app}/${kind}`);
          if (!mapped) throw new Error(`no loopback port for ${app}:${port}`);
          return `127.0.0.1:${mapped}`;
        });
      /** A pod's env, moved from the cluster to this machine: loopback addresses and ports, a scratch dir per pod. */
      const onThisMachine = (chartEnv: Record<string, string>, pod: string): NodeJS.ProcessEnv => {
        const env: Record<string, string> = {};
        for (const [name, value] of Object.entries(chartEnv)) env[name] = local(value);
        for (const [name, kind] of [
          ['GRPC_PORT', 'grpc'],
          ['HTTP_PORT', 'http'],
          ['MARKETPLACE_HTTP_PORT', 'http'],
          ['METRICS_PORT', 'metrics'],
        ]) {
          if (name in env) env[name] = String(ports.get(`${pod}/${kind}`));
        }
        // A pod listens on every interface of its own network namespace; here that would be this machine's.
        if (env.GRPC_HOST) env.GRPC_HOST = '127.0.0.1';
        // The pod's /tmp emptyDir.
        expect(env.DATA_DIR).toBe('/tmp/platform-data');
        env.DATA_DIR = fs.mkdtempSync(path.join(work, `${pod}-`));
        // The chart's default is authz's embedded engine: no OpenFGA setting reaches any pod.
        expect(Object.keys(env).filter((name) => name.startsWith('OPENFGA_'))).toEqual([]);
        for (const [name, value] of Object.entries(env)) {
          if (/\.svc\b|platform-[a-z]+-?[a-z]*:\d/.test(value)) throw new Error(`${pod}: ${name}=${value} still names a cluster address`);
        }
        // What the image's ENV sets (the container's env, the chart's NODE_OPTIONS among it, wins as in a pod), and a
        // PATH for the entrypoint's shell.
        return {
          NODE_ENV: 'production',
          NODE_OPTIONS: '--enable-source-maps --max-semi-space-size=32',
          ...env,
          HOME: work,
          PATH: process.env.PATH,
        };
      };
      for (const app of APPS) {
        envs.set(app, onThisMachine(containerEnv(manifests, find(manifests, 'Deployment', `platform-${app}`).spec.template.spec), app));
      }

      // The migration Job, as the chart runs it, before any app serves.
      const jobPod = find(manifests, 'Job', 'platform-migrations').spec.template.spec;
      const job = run(entrypoint, jobPod.containers[0].args, onThisMachine(containerEnv(manifests, jobPod), 'migrations'), image);
      const jobCode = await job.exited;
      if (jobCode !== 0) throw new Error(`the migration Job failed (${jobCode}):\n${job.output()}`);
      expect(job.output()).toContain('orgs-teams: migrations applied, not serving (RUN_MIGRATIONS_ONLY)');

      // Every Deployment at once, as a rollout starts them; orgs-teams waits for authz by itself.
      await Promise.all(APPS.map((app) => start(app)));
      gateway = `http://127.0.0.1:${ports.get('gateway/http')}/api/v1`;
      for (const app of APPS) grpcAddress.set(app, `127.0.0.1:${ports.get(`${app}/grpc`)}`);
    };
    try {
      await bringUp();
    } catch (err) {
      if (!/is already in use/.test((err as Error).message)) throw err;
      killAll();
      await Promise.all([...running.values()].map((p) => p.exited));
      running.clear();
      await bringUp();
    }
    // The pods found nothing left to migrate.
    for (const app of APPS.filter((a) => a !== 'gateway')) expect(running.get(app)!.output()).toMatch(/"applied":0/);
  }, 300_000);

  afterAll(async () => {
    for (const p of running.values()) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGTERM');
    // SIGTERM as Kubernetes stops a pod; what has not stopped after the 10 s grace is killed.
    await Promise.race([Promise.all([...running.values()].map((p) => p.exited)), new Promise((r) => setTimeout(r, 12_000).unref())]);
    killAll();
    process.removeListener('exit', killAll);
    await dropDatabase?.();
    fs.rmSync(work, { recursive: true, force: true });
  }, 30_000);

  /** Calls the gateway as a client would. */
  const call = async (method: string, url: string, auth?: string, json?: unknown) => {
    const headers: Record<string, string> = {};
    if (auth) headers.authorization = auth;
    if (json !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(`${gateway}${url}`, { method, headers, body: json === undefined ? undefined : JSON.stringify(json) });
    const text = await res.text();
    return { status: res.status, body: text && (res.headers.get('content-type') ?? '').includes('json') ? JSON.parse(text) : text };
  };
  const tokenFor = async (user: string, password: string, name: string) => {
    const res = await call('POST', `/users/${user}/tokens`, basic(user, password), { name });
    expect(res).toMatchObject({ status: 201 });
    return `token ${res.body.sha1}`;
  };

  it('serves the web console at / from the image’s files', async () => {
    // A console path outside the API (the API has its own GET /orgs).
    const site = gateway.replace(/\/api\/v1$/, '');
    const page = await fetch(`${site}/orgs/demo`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    const script = /src="(\/assets\/[^"]+\.js)"/.exec(await page.text())?.[1];
    expect(script).toBeDefined();
    const asset = await fetch(`${site}${script}`);
    expect([asset.status, asset.headers.get('content-type')]).toEqual([200, expect.stringMatching(/javascript/)]);
  });

  it('walks a client’s flow, loses only authz’s routes while authz is killed, and keeps every acknowledged write', async () => {
    // The bootstrap site admin (the chart's Secret) makes a user, an organization, a team and a custom role.
    const admin = await tokenFor('admin', ADMIN_PASSWORD, 'topology');
    const bob = await call('POST', '/admin/users', admin, { username: 'bob', email: 'bob@example.com', password: 'bob-password' });
    expect(bob.status).toBe(201);
    const org = await call('POST', '/orgs', admin, { username: 'acme' });
    expect(org.status).toBe(201);
    const team = await call('POST', '/orgs/acme/teams', admin, { name: 'ops', type: 'general' });
    expect(team.status).toBe(201);
    expect((await call('PUT', `/teams/${team.body.id}/members/bob`, admin)).status).toBe(204);
    const role = await call('POST', '/authz/roles?org=acme', admin, {
      name: 'Role makers',
      description: 'may create roles',
      permissions: [{ namespace: 'org', action: 'create_role' }],
      teamIDs: [team.body.id],
    });
    expect(role.status).toBe(201);
    const bobToken = await tokenFor('bob', 'bob-password', 'before');
    const allowed = `/authz/objects/organization/${org.body.id}/allowed-permissions?org=acme`;
    const before = await call('GET', allowed, bobToken);
    expect(before.status).toBe(200);
    expect(before.body.allowedPermissions).toEqual(expect.arrayContaining(['member', 'create_role']));

    // authz dies without a chance to clean up.
    const authz = running.get('authz')!;
    authz.child.kill('SIGKILL');
    await authz.exited;

    // Its routes answer 503 naming it ...
    await eventually(async () => (await call('GET', '/authz/roles?org=acme', bobToken)).status === 503, 10_000, 100);
    expect(await call('GET', allowed, bobToken)).toEqual({
      status: 503,
      body: { message: 'authz is unavailable', url: expect.any(String) },
    });
    // ... every other app keeps answering, and writes that need no authz are acknowledged.
    expect((await call('GET', '/version')).status).toBe(200);
    expect(await call('GET', '/user', bobToken)).toMatchObject({ status: 200, body: { login: 'bob' } });
    expect(await call('GET', '/orgs/acme')).toMatchObject({ status: 200, body: { username: 'acme' } });
    expect((await call('GET', '/orgs/acme/members', bobToken)).status).toBe(200);
    const duringOutage = await tokenFor('bob', 'bob-password', 'during-outage');
    for (const app of APPS.filter((a) => a !== 'authz')) expect(running.get(app)!.child.exitCode).toBeNull();

    // authz comes back (its Deployment would restart the pod): the routes recover by themselves. Both of the
    // gateway's channels to it reconnect, each on its own backoff: the roles one (the list) and the checks one (the
    // admin's checks on the role, which the gateway has not kept).
    await start('authz');
    await eventually(async () => (await call('GET', '/authz/roles?org=acme', duringOutage)).status === 200, 15_000, 200);
    await eventually(async () => (await call('GET', `/authz/roles/${role.body.id}?org=acme`, admin)).status === 200, 15_000, 200);

    // Nothing acknowledged was lost: the role, the grant through the team, the token made during the outage.
    expect(await call('GET', `/authz/roles/${role.body.id}?org=acme`, admin)).toEqual({ status: 200, body: role.body });
    const after = await call('GET', allowed, duringOutage);
    expect(after).toEqual({ status: 200, body: before.body });
    expect((await call('GET', `/teams/${team.body.id}/members/bob`, admin)).status).toBe(200);
    // And the role works: bob may create roles, on the restarted authz.
    expect((await call('POST', '/authz/roles?org=acme', duringOutage, { name: 'Made by bob', permissions: [] })).status).toBe(201);
  }, 120_000);
  (pythonClientAvailable() ? it : it.skip)(
    'answers another team’s Python client, built as docs/grpc.md says, by its service account’s roles: Check, ListObjects, ListUsers and Expand cut to what it sees; refuses internal methods and strangers, and the next call after a revocation',
    async () => {
      const admin = await tokenFor('admin', ADMIN_PASSWORD, 'python-client');
      const carol = await call('POST', '/admin/users', admin, {
        username: 'carol',
        email: 'carol@example.com',
        password: 'carol-password',
      });
      const globex = await call('POST', '/orgs', admin, { username: 'globex' });
      const initech = await call('POST', '/orgs', admin, { username: 'initech' });
      const team = await call('POST', '/orgs/globex/teams', admin, { name: 'readers', type: 'general' });
      // carol is in initech too, which globex's service account does not see.
      const initechTeam = await call('POST', '/orgs/initech/teams', admin, { name: 'ops', type: 'general' });
      expect([carol.status, globex.status, initech.status, team.status, initechTeam.status]).toEqual([201, 201, 201, 201, 201]);
      expect(await call('PUT', `/teams/${team.body.id}/members/carol`, admin)).toMatchObject({ status: 204 });
      expect(await call('PUT', `/teams/${initechTeam.body.id}/members/carol`, admin)).toMatchObject({ status: 204 });
      // The readers of globex may view its contracts, through a custom role.
      const role = await call('POST', '/authz/roles?org=globex', admin, {
        name: 'Contract readers',
        permissions: [{ namespace: 'contract_mgmt', action: 'view_contracts' }],
        teamIDs: [team.body.id],
      });
      expect(role.status).toBe(201);
      // globex's owner makes a service account of globex, and a token for it.
      const account = await call('POST', '/orgs/globex/service-accounts', admin, { name: 'globex-checker', description: 'billing checks' });
      expect(account.status).toBe(201);
      const minted = await call('POST', `/orgs/globex/service-accounts/${account.body.id}/tokens`, admin, { name: 'python' });
      expect(minted.status).toBe(201);
      const token: string = minted.body.sha1;

      // The stubs, built exactly as docs/grpc.md says (its block run by bash), from the files it lists.
      const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'platform-python-'));
      const stubs = buildDocumentedStubs(scratch);
      const python = await PythonClient.start(stubs);
      try {
        // The generated stubs leave the standard library's `platform` module alone.
        expect(python.platformSystem).toBe('Linux');
        const authz = grpcAddress.get('authz')!;
        const orgsTeams = grpcAddress.get('orgs-teams')!;
        const check = (user: number, org: number) => ({
          tuple: { user: `user:${user}`, relation: 'member', object: `organization:${org}` },
        });
        const AUTHZ = 'platformadmin.authz.v1.AuthzService';
        const [CAROL, GLOBEX, INITECH, SELF] = [
          `user:${carol.body.id}`,
          `organization:${globex.body.id}`,
          `organization:${initech.body.id}`,
          `user:${account.body.id}`,
        ];

        // docs/grpc.md's example, as written, with this deployment's address, token and ids: it prints what the page says.
        const tokenFile = path.join(scratch, 'token');
        fs.writeFileSync(tokenFile, `${token}\n`);
        const ours = (text: string) =>
          text
            .replaceAll('platform-authz.platform.svc:50051', authz)
            .replaceAll('/var/run/secrets/platformadmin/token', tokenFile)
            .replaceAll('user:1234', CAROL)
            .replaceAll('organization:56', GLOBEX)
            .replaceAll('organization:78', INITECH);
        const example = runPython(stubs, ours(documentedBlock('python-example')));
        expect({ status: example.status, stderr: example.stderr }).toEqual({ status: 0, stderr: '' });
        expect(example.stdout.trim()).toBe(ours(documentedBlock('python-example-output')).trim());

        // Check with the console's permission names and the model's relation alike; an ambiguous name is refused.
        for (const relation of ['view_contracts', 'view_contracts:contract_mgmt', 'view_contracts_mgmt']) {
          const answer = await python.call(authz, `${AUTHZ}/Check`, { tuple: { user: CAROL, relation, object: GLOBEX } }, token);
          expect({ relation, answer }).toMatchObject({ relation, answer: { code: 'OK', response: { allowed: true } } });
        }
        expect(
          await python.call(authz, `${AUTHZ}/Check`, { tuple: { user: CAROL, relation: 'list', object: GLOBEX } }, token),
        ).toMatchObject({
          code: 'INVALID_ARGUMENT',
          details: expect.stringContaining("'list:team'"),
        });

        // ListObjects: carol is a member of globex and initech (as the site admin reads it), but the account sees globex only.
        const carolsOrgs = await call('GET', '/users/carol/orgs', admin);
        expect(carolsOrgs.body.map((o: { username: string }) => o.username).sort()).toEqual(['globex', 'initech']);
        const objects = (user: string, relation: string, type: string) =>
          python.call(authz, `${AUTHZ}/ListObjects`, { user, relation, type }, token);
        expect(await objects(CAROL, 'member', 'organization')).toMatchObject({ code: 'OK', response: { objects: [GLOBEX] } });
        expect(await objects(CAROL, 'view_contracts', 'organization')).toMatchObject({ code: 'OK', response: { objects: [GLOBEX] } });
        // About itself it is answered whole; about someone else's tokens never.
        expect(await objects(SELF, 'member', 'organization')).toMatchObject({ code: 'OK', response: { objects: [GLOBEX] } });
        expect(await objects(CAROL, 'view', 'token')).toMatchObject({ code: 'PERMISSION_DENIED' });

        // ListUsers: the people of globex, its teams as usersets; initech's are refused.
        const users = (object: string, userFilters: object[]) =>
          python.call(authz, `${AUTHZ}/ListUsers`, { object, relation: 'member', userFilters }, token);
        const people = await users(GLOBEX, [{ type: 'user' }]);
        expect(people.code).toBe('OK');
        expect(people.response.users).toEqual(expect.arrayContaining([CAROL, SELF]));
        const usersets = await users(GLOBEX, [{ type: 'team', relation: 'member' }]);
        expect(usersets.response.users).toEqual(expect.arrayContaining([`team:${team.body.id}#member`]));
        expect(usersets.response.users.every((u: string) => u.startsWith('team:'))).toBe(true);
        expect(await users(INITECH, [{ type: 'user' }])).toMatchObject({
          code: 'PERMISSION_DENIED',
          details: expect.stringContaining(`access on ${INITECH}`),
        });

        // Expand: globex's membership one level deep; initech's refused.
        const expanded = await python.call(authz, `${AUTHZ}/Expand`, { object: GLOBEX, relation: 'member' }, token);
        expect(expanded.code).toBe('OK');
        expect(expanded.response.tree.root.name).toBe(`${GLOBEX}#member`);
        const [direct, owners] = expanded.response.tree.root.union.nodes;
        expect(direct.leaf.users.users).toEqual(expect.arrayContaining([`team:${team.body.id}#member`]));
        expect(owners.leaf.computed.userset).toBe(`${GLOBEX}#owner`);
        expect(await python.call(authz, `${AUTHZ}/Expand`, { object: INITECH, relation: 'member' }, token)).toMatchObject({
          code: 'PERMISSION_DENIED',
        });

        // Within its organization: a check about a member, the organization, its teams.
        expect(await python.call(authz, `${AUTHZ}/Check`, check(carol.body.id, globex.body.id), token)).toMatchObject({
          code: 'OK',
          response: { allowed: true },
        });
        expect(
          await python.call(orgsTeams, 'platformadmin.orgsteams.v1.OrganizationsService/GetOrg', { name: 'globex' }, token),
        ).toMatchObject({
          code: 'OK',
          response: { username: 'globex' },
        });
        const teams = await python.call(
          orgsTeams,
          'platformadmin.orgsteams.v1.OrganizationsService/ListTeams',
          { orgId: globex.body.id },
          token,
        );
        expect(teams.code).toBe('OK');
        expect(teams.response.teams.map((t: { name: string }) => t.name)).toContain('readers');
        const ca = await python.call(
          grpcAddress.get('contracts-licensing')!,
          'platformadmin.contractslicensing.v1.LicensingService/CACertificate',
          {},
          token,
        );
        expect(ca).toMatchObject({ code: 'OK', response: { pem: expect.stringContaining('BEGIN CERTIFICATE') } });

        // Outside its roles: another organization; an internal method, even about itself.
        expect(await python.call(authz, `${AUTHZ}/Check`, check(carol.body.id, initech.body.id), token)).toMatchObject({
          code: 'PERMISSION_DENIED',
        });
        const makeAdmin = { writes: [{ user: `user:${account.body.id}`, relation: 'admin', object: 'site:platform' }] };
        expect(await python.call(authz, `${AUTHZ}/WriteTuples`, makeAdmin, token)).toMatchObject({ code: 'PERMISSION_DENIED' });
        expect(await python.call(authz, `${AUTHZ}/ReadTuples`, {}, token)).toMatchObject({ code: 'PERMISSION_DENIED' });

        // A stranger: no token, a made-up one; the stranger's WriteTuples making an account site admin.
        const makeCarolAdmin = { writes: [{ user: `user:${carol.body.id}`, relation: 'admin', object: 'site:platform' }] };
        expect(await python.call(authz, `${AUTHZ}/WriteTuples`, makeCarolAdmin)).toMatchObject({ code: 'UNAUTHENTICATED' });
        expect(await python.call(authz, `${AUTHZ}/ReadTuples`, {})).toMatchObject({ code: 'UNAUTHENTICATED' });
        expect(await python.call(authz, `${AUTHZ}/Check`, check(carol.body.id, globex.body.id), 'made-up')).toMatchObject({
          code: 'UNAUTHENTICATED',
        });
        // A person's own token is for the REST API, not for gRPC.
        const carolToken = (await tokenFor('carol', 'carol-password', 'not-for-grpc')).replace(/^token /, '');
        expect(await python.call(authz, `${AUTHZ}/Check`, check(carol.body.id, globex.body.id), carolToken)).toMatchObject({
          code: 'UNAUTHENTICATED',
        });

        // Revoked: the very next call is refused, on both apps.
        const tokens = await call('GET', `/orgs/globex/service-accounts/${account.body.id}/tokens`, admin);
        const revoked = await call('DELETE', `/orgs/globex/service-accounts/${account.body.id}/tokens/${tokens.body[0].id}`, admin);
        expect(revoked.status).toBe(204);
        expect(await python.call(authz, `${AUTHZ}/Check`, check(carol.body.id, globex.body.id), token)).toMatchObject({
          code: 'UNAUTHENTICATED',
        });
        expect(
          await python.call(orgsTeams, 'platformadmin.orgsteams.v1.OrganizationsService/GetOrg', { name: 'globex' }, token),
        ).toMatchObject({
          code: 'UNAUTHENTICATED',
        });
      } finally {
        python.stop();
        fs.rmSync(scratch, { recursive: true, force: true });
      }
    },
    90_000,
  );

  /** `request` as the whole message of OrganizationsService's `method` (`listTeams`: a ListTeamsRequest). */
  const requestOf = (method: string, request: object) => {
    const type = `${method[0].toUpperCase()}${method.slice(1)}Request` as keyof typeof orgsTeamsOrgsV1;
    return (orgsTeamsOrgsV1[type] as { fromPartial(o: object): unknown }).fromPartial(request);
  };

  it('answers another team’s Node client as docs/grpc.md walks it through, an organization named by its name or its id', async () => {
    const admin = await tokenFor('admin', ADMIN_PASSWORD, 'node-client');
    const dana = await call('POST', '/admin/users', admin, { username: 'dana', email: 'dana@example.com', password: 'dana-password' });
    const hooli = await call('POST', '/orgs', admin, { username: 'hooli' });
    const umbrella = await call('POST', '/orgs', admin, { username: 'umbrella', visibility: 'private' });
    const team = await call('POST', '/orgs/hooli/teams', admin, { name: 'platform', type: 'general' });
    expect([dana.status, hooli.status, umbrella.status, team.status]).toEqual([201, 201, 201, 201]);
    expect(await call('PUT', `/teams/${team.body.id}/members/dana`, admin)).toMatchObject({ status: 204 });
    const account = await call('POST', '/orgs/hooli/service-accounts', admin, { name: 'hooli-reader' });
    const minted = await call('POST', `/orgs/hooli/service-accounts/${account.body.id}/tokens`, admin, { name: 'node' });
    expect([account.status, minted.status]).toEqual([201, 201]);
    const token: string = minted.body.sha1;

    // The walk-through as written, with this deployment's addresses, token, proto directory and user; run by node
    // from the repository, where @grpc/grpc-js and @grpc/proto-loader are installed as a team would install them.
    const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'platform-node-'));
    try {
      const tokenFile = path.join(scratch, 'token');
      fs.writeFileSync(tokenFile, `${token}\n`);
      const ours = (text: string) =>
        text
          .replaceAll('platform-authz.platform.svc:50051', grpcAddress.get('authz')!)
          .replaceAll('platform-orgs-teams.platform.svc:50051', grpcAddress.get('orgs-teams')!)
          .replaceAll('/var/run/secrets/platformadmin/token', tokenFile)
          .replaceAll("'./proto'", JSON.stringify(path.join(ROOT, 'proto')))
          .replaceAll('user:1234', `user:${dana.body.id}`);
      // Without colours (a CI may force them), so what it prints is the page's text.
      const { FORCE_COLOR: _force, ...env } = process.env;
      const example = spawnSync(process.execPath, ['--input-type=module', '-'], {
        input: ours(documentedBlock('node-example')),
        cwd: ROOT,
        env: { ...env, NO_COLOR: '1' },
        encoding: 'utf8',
        timeout: 60_000,
      });
      expect({ status: example.status, stderr: example.stderr }).toEqual({ status: 0, stderr: '' });
      expect(example.stdout.trim()).toBe(ours(documentedBlock('node-example-output')).trim());
    } finally {
      fs.rmSync(scratch, { recursive: true, force: true });
    }

    // By name or id alike, as the account may see the organization; a name and an id of two organizations refused.
    // Each request whole (absent fields as their defaults), as the generated encoders expect it.
    const orgsCall = (method: string, request: object) =>
      callAsStranger(grpcAddress.get('orgs-teams')!, orgsTeamsOrgsV1.OrganizationsServiceService, method, requestOf(method, request), {
        authorization: `Bearer ${token}`,
      });
    const members = await orgsCall('listMembers', { orgName: 'hooli' });
    expect(members).toMatchObject({ code: status.OK });
    expect((members.response as { members: { login: string }[] }).members.map((m) => m.login)).toContain('dana');
    expect(await orgsCall('getMembership', { orgName: 'hooli', username: 'dana' })).toMatchObject({ response: { member: true } });
    expect(await orgsCall('getTeam', { teamId: team.body.id, orgName: 'hooli' })).toMatchObject({ response: { name: 'platform' } });
    expect(await orgsCall('getTeam', { teamId: team.body.id, orgName: 'umbrella' })).toMatchObject({ code: status.NOT_FOUND });
    expect(await orgsCall('listTeams', { orgName: 'hooli', orgId: umbrella.body.id })).toMatchObject({
      code: status.INVALID_ARGUMENT,
    });
    // Another tenant's private organization is answered as one that does not exist, naming no more than was asked.
    for (const orgId of [umbrella.body.id, 987_654_321])
      expect(await orgsCall('getOrg', { orgId })).toEqual({ code: status.NOT_FOUND, details: `organization ${orgId} does not exist` });
    for (const orgName of ['umbrella', 'no-such-org'])
      expect(await orgsCall('listTeams', { orgName })).toEqual({ code: status.NOT_FOUND, details: `organization ${orgName} does not exist` });
    // A public organization of another tenant is known by name (GetOrg answers it), but its teams are not the account's.
    expect(await call('POST', '/orgs', admin, { username: 'vandelay' })).toMatchObject({ status: 201 });
    expect(await orgsCall('getOrg', { name: 'vandelay' })).toMatchObject({ code: status.OK });
    expect(await orgsCall('listTeams', { orgName: 'vandelay' })).toMatchObject({ code: status.PERMISSION_DENIED });
  }, 90_000);
});
