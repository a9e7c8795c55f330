import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { openDatabase, Outbox, type Database } from '@platform/db';
import { ConflictError, InputError, NotFoundError, UnavailableError, ValidationError } from '@platform/errors';
import type { licensingV1 } from '@platform/proto';
import { FileObjectStorage } from '@platform/object-storage';
import { createTestDatabase } from '@platform/testing';
import { migrations } from '../migrations';
import { createContracts, type Contracts } from '../src/contracts/contracts';
import type { Inventory } from '../src/contracts/inventory';
import { Licenses } from '../src/licenses/licenses';
import { holderLogins, LicenseRegistration, REGISTER_LICENSE_EFFECT } from '../src/licenses/registration';
import { authorityFromPem, generateAuthority } from '../src/licensing';

// License registration as one operation, against real Postgres with a stand-in orgs-teams kept in memory: the holder's
// account is found, made (self-hosted) or not (hosted), and recorded with the registration; a registration cut after
// its account was made (a lost answer, a crash) is finished by the outbox relay of the next process with that account,
// and applying its step again has the effect of once.

const ORG = 42;
/** Bound by the contract, never enrolled (an air-gapped cluster with an offline license). */
const CLUSTER = '0b7d4c1e-0000-4000-8000-0000000000d1';
const DAY = 86_400;
const quiet = { info: () => {}, warn: () => {}, error: () => {}, debug: () => {} } as any;
const nobodyEnrolled: Inventory = { cluster: async () => undefined, clustersByUid: async () => new Map(), clustersOf: async () => [] };

interface StubUser {
  id: number;
  login: string;
  email: string;
}

/** orgs-teams' accounts as registration sees them: a login or an email taken is 409; failures on demand. */
function accountsStub() {
  let next = 100;
  const users = new Map<string, StubUser>();
  /** createUser throws this; with `afterMaking`, once the account is made (its answer lost). */
  const failing: { createUser?: Error; afterMaking?: boolean } = {};
  const accounts = {
    getUser: async (req: { login: string }) => {
      const u = users.get(req.login);
      if (!u) throw new NotFoundError(`user ${req.login} does not exist`);
      return u;
    },
    createUser: async (req: { username: string; email: string; mustChangePassword: boolean }) => {
      if (failing.createUser && !failing.afterMaking) throw failing.createUser;
      if (users.has(req.username)) throw new ConflictError(`user ${req.username} already exists`);
      if ([...users.values()].some((u) => u.email.toLowerCase() === req.email.toLowerCase()))
        throw new ConflictError(`email ${req.email} is already used`);
      expect(req.mustChangePassword).toBe(true);
      const u = { id: next++, login: req.username, email: req.email };
      users.set(u.login, u);
      if (failing.createUser) throw failing.createUser;
      return u;
    },
  };
  return { users, failing, accounts };
}

describe('license registration: the holder’s account and the record, all of it, also after a crash', () => {
  let db: Database;
  let drop: () => Promise<void>;
  let dir: string;
  let contracts: Contracts;
  let licenses: Licenses;
  let contractId: number;
  let ccId: number;
  let stub: ReturnType<typeof accountsStub>;
  const outboxes: Outbox[] = [];

  /** The service as one process runs it: its registration over an outbox of its own (holding its own lease). */
  const start = (makesAccounts: boolean) => {
    const registration = new LicenseRegistration(licenses, stub.accounts as never, makesAccounts);
    const outbox = new Outbox(db, { [REGISTER_LICENSE_EFFECT]: registration.effect() }, { log: quiet });
    registration.use(outbox);
    outboxes.push(outbox);
    return { registration, outbox };
  };
  /** A license of the contract for CLUSTER naming `email`, and the request that registers it. */
  const licensed = async (email: string): Promise<{ serial: string; request: licensingV1.RegisterLicenseRequest }> => {
    const issued = await licenses.issueForBinding({ contractId, ccId, ownerId: 0, actor: 'root', ownerEmail: email });
    return { serial: issued.serial, request: { license: issued.license, clusterUid: CLUSTER, features: ['postgres'], caCert: Buffer.alloc(0) } };
  };
  const recorded = (serial: string) => db.table('license_registrations').where({ serial }).first();
  const pending = async () => Number((await db.table('outbox').count({ n: '*' }))[0].n);

  beforeAll(async () => {
    const test = await createTestDatabase();
    drop = test.drop;
    db = await openDatabase({ url: test.url, dataDir: '', schema: 'contracts' });
    await db.migrate(migrations);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'registration-test-'));
    const ca = await generateAuthority();
    const authority = await authorityFromPem(ca.certificatePem, ca.privateKeyPem);
    contracts = createContracts(db, new FileObjectStorage(dir), nobodyEnrolled, quiet);
    const none = { usage: async () => ({ cpuCoreHours: 0, memoryGibHours: 0, storageGibHours: 0, objectHours: 0 }) };
    licenses = new Licenses(db, authority, contracts, nobodyEnrolled, none, quiet);
    const [{ contract }] = await contracts.lifecycle.create({
      ownerId: ORG,
      ownerLogin: 'acme',
      ownerType: 'organization',
      products: ['productdb'],
      fields: { features: ['postgres'], featuresGiven: true, endUnix: Math.floor(Date.now() / 1000) + 30 * DAY, allowOffline: true },
      actor: 'root',
    });
    contractId = contract.id;
    ccId = (await contracts.binding.bind(contract.id, 0, [{ cluster: CLUSTER, displayName: '', tags: [] }], 'root')).find((c) => c.cluster === CLUSTER)!.id;
  });
  beforeEach(() => {
    stub = accountsStub();
  });
  afterEach(async () => {
    for (const outbox of outboxes.splice(0)) await outbox.stop();
  });
  afterAll(async () => {
    await db?.close();
    await drop?.();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('makes a self-hosted holder one account, recorded with the registration, however often the cluster registers', async () => {
    const { registration } = start(true);
    const { serial, request } = await licensed('dana.ops@customer.example');
    const first = await registration.register(request);
    const holder = stub.users.get('dana.ops')!;
    expect(first).toMatchObject({ serial, clusterUid: CLUSTER, holderEmail: 'dana.ops@customer.example', holderId: holder.id, holderLogin: 'dana.ops' });
    const again = await registration.register(request);
    expect(again).toMatchObject({ holderId: holder.id, firstRegisteredUnix: first.firstRegisteredUnix });
    expect(stub.users.size).toBe(1);
    expect(await pending()).toBe(0);
  });

  it('records by email alone on a hosted platform, and when the email is another login’s account', async () => {
    const hosted = start(false);
    const a = await licensed('erin@customer.example');
    expect(await hosted.registration.register(a.request)).toMatchObject({ serial: a.serial, holderId: 0, holderLogin: '', holderEmail: 'erin@customer.example' });
    expect(stub.users.size).toBe(0);

    const selfHosted = start(true);
    // erin@customer.example is the account `erin-elsewhere`; both logins its email gives are free.
    stub.users.set('erin-elsewhere', { id: 7, login: 'erin-elsewhere', email: 'erin@customer.example' });
    expect(await selfHosted.registration.register(a.request)).toMatchObject({ holderId: 0, holderLogin: '' });
    // The local part is someone else's login: the holder's account takes the second login.
    stub.users.set('frank', { id: 8, login: 'frank', email: 'frank@elsewhere.example' });
    const b = await licensed('frank@customer.example');
    const [, second] = holderLogins('frank@customer.example');
    expect(await selfHosted.registration.register(b.request)).toMatchObject({ holderId: stub.users.get(second)!.id, holderLogin: second });
    expect(await pending()).toBe(0);
  });

  it('answers a refused account (422) and leaves nothing: no account, no registration, no pending step', async () => {
    const { registration } = start(true);
    const { serial, request } = await licensed('gina@customer.example');
    stub.failing.createUser = new ValidationError('username: not a valid login');
    await expect(registration.register(request)).rejects.toBeInstanceOf(ValidationError);
    expect(stub.users.size).toBe(0);
    expect(await recorded(serial)).toBeUndefined();
    expect(await pending()).toBe(0);
    // Verification comes first, as before: a bad license is 422 and a cluster the owner does not have 400, untouched.
    await expect(registration.register({ ...request, license: Buffer.from('not a certificate') })).rejects.toMatchObject({ reason: 'malformed' });
    await expect(registration.register({ ...request, features: [] })).rejects.toBeInstanceOf(InputError);
  });

  it('after the account was made and the service stopped before recording, the next process records it with that account', async () => {
    const crashed = start(true);
    const { serial, request } = await licensed('hana@customer.example');
    // The account is made, then the answer is lost: as a crash between the two steps leaves it.
    stub.failing.createUser = new UnavailableError('orgs-teams is unavailable');
    stub.failing.afterMaking = true;
    await expect(crashed.registration.register(request)).rejects.toThrow('orgs-teams is unavailable');
    const account = stub.users.get('hana')!;
    expect(account).toBeDefined();
    expect(await recorded(serial)).toBeUndefined();
    expect(await pending()).toBe(1);
    delete stub.failing.createUser;

    // The process is gone (its holder lock with it); the next one's relay takes the step over at once.
    await crashed.outbox.stop();
    outboxes.splice(outboxes.indexOf(crashed.outbox), 1);
    const next = start(true);
    expect(await next.outbox.relay()).toBe(1);
    expect(await recorded(serial)).toMatchObject({ holder_login: 'hana', cluster_uid: CLUSTER });
    expect(Number((await recorded(serial)).holder_id)).toBe(account.id);
    expect(stub.users.size).toBe(1);
    expect(await pending()).toBe(0);

    // The same step delivered again has the effect of once: the same account, one registration, first seen unchanged.
    const before = await recorded(serial);
    const step = { op: 'redelivered', serial, clusterUid: CLUSTER, email: 'hana@customer.example', login: 'hana' };
    await next.registration.effect().apply(step, {});
    await next.registration.effect().apply(step, {});
    expect(stub.users.size).toBe(1);
    expect(await recorded(serial)).toMatchObject({ holder_id: before.holder_id, holder_login: 'hana', first_registered_at: before.first_registered_at });
    expect(Number((await db.table('license_registrations').where({ serial }).count({ n: '*' }))[0].n)).toBe(1);
    // And the cluster registering again finds the same account.
    expect(await next.registration.register(request)).toMatchObject({ holderId: account.id });
    expect(stub.users.size).toBe(1);
  });

  it('after orgs-teams was down before the account was made, the relay makes it once and records it', async () => {
    const crashed = start(true);
    const { serial, request } = await licensed('ivan@customer.example');
    stub.failing.createUser = new UnavailableError('orgs-teams is unavailable');
    await expect(crashed.registration.register(request)).rejects.toThrow('orgs-teams is unavailable');
    expect(stub.users.size).toBe(0);
    expect(await pending()).toBe(1);
    delete stub.failing.createUser;
    await crashed.outbox.stop();
    outboxes.splice(outboxes.indexOf(crashed.outbox), 1);
    const next = start(true);
    expect(await next.outbox.relay()).toBe(1);
    expect(await recorded(serial)).toMatchObject({ holder_login: 'ivan' });
    expect(stub.users.size).toBe(1);
    expect(await pending()).toBe(0);
  });
});
