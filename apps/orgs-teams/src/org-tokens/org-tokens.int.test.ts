import { randomBytes } from 'node:crypto';
import { fromPublic } from 'nkeys.js';
import { openDatabase, type Database } from '@platform/db';
import { createTestDatabase } from '@platform/testing';
import { migrations } from '../../migrations';
import { Identity } from '../identity/identity';
import { OrgTokens } from './org-tokens';
import { SecretBox } from '@platform/service-kit';

describe('organization machine credentials', () => {
  let db: Database;
  let drop: () => Promise<void>;
  let tokens: OrgTokens;
  let managerOrg: number;
  let plainOrg: number;
  const box = new SecretBox(randomBytes(32));

  const org = async (login: string, managerEndpoint: string) => {
    const [row] = await db
      .table('accounts')
      .insert({ type: 1, login, lower_login: login, manager_endpoint: managerEndpoint })
      .returning('id');
    return row.id as number;
  };

  beforeAll(async () => {
    const t = await createTestDatabase();
    drop = t.drop;
    db = await openDatabase({ url: t.url, dataDir: '', schema: 'identity' });
    await db.migrate(migrations);
    tokens = new OrgTokens(db, box);
    managerOrg = await org('fleet', 'https://hub.example.com');
    plainOrg = await org('plain', '');
  });
  afterAll(async () => {
    await db.close();
    await drop();
  });

  it('has no sync token, system admin tokens or bus accounts before any is issued', async () => {
    await expect(tokens.getSyncToken(managerOrg)).rejects.toMatchObject({ kind: 'not-found' });
    await expect(tokens.listSystemAdminTokens(managerOrg)).rejects.toMatchObject({
      kind: 'input',
      message: 'the organization has no system admin yet',
    });
    await expect(tokens.listBusAccounts(managerOrg)).rejects.toMatchObject({ kind: 'input' });
  });

  it('creates sync tokens only for organizations of multi-cluster-manager origin', async () => {
    await expect(tokens.createSyncToken({ orgId: plainOrg, name: '', sha1: '' })).rejects.toMatchObject({
      kind: 'input',
      message: 'the organization is not of multi-cluster-manager origin',
    });
  });

  it('shows the sync token secret once, stores it sealed, and it authenticates as the system admin', async () => {
    const value = randomBytes(20).toString('hex');
    await tokens.createSyncToken({ orgId: managerOrg, name: 'hub', sha1: value });
    const stored = await db.table('manager_sync_tokens').where({ org_id: managerOrg }).first();
    expect(stored.secret_ciphertext).not.toContain(value);

    const first = await tokens.getSyncToken(managerOrg);
    expect(first).toMatchObject({ orgId: managerOrg, orgName: 'fleet', secretAccessKey: value });
    expect((await tokens.getSyncToken(managerOrg)).secretAccessKey).toBe('');

    const { user } = await new Identity(db).authenticate(value);
    expect(user).toMatchObject({ id: first.userId, login: `~sysadmin-${managerOrg}` });
    expect((await tokens.listSystemAdminTokens(managerOrg)).map((t) => t.name)).toEqual(['hub']);
  });

  it('replaces the sync token, revoking the old one', async () => {
    const old = randomBytes(20).toString('hex');
    await tokens.createSyncToken({ orgId: managerOrg, name: 'hub', sha1: old });
    await tokens.createSyncToken({ orgId: managerOrg, name: 'hub', sha1: '' });
    await expect(new Identity(db).authenticate(old)).rejects.toMatchObject({ kind: 'unauthenticated' });
    expect((await tokens.getSyncToken(managerOrg)).secretAccessKey).toMatch(/^[0-9a-f]{40}$/);
    await tokens.deleteSyncToken(managerOrg);
    await expect(tokens.getSyncToken(managerOrg)).rejects.toMatchObject({ kind: 'not-found' });
    expect(await tokens.listSystemAdminTokens(managerOrg)).toEqual([]);
  });

  it('issues bus accounts with real NATS user keys, and persists revocation', async () => {
    const created = await tokens.createBusAccount({ orgId: managerOrg, clusterId: 'c-1', productName: 'productdb' });
    expect(created.seed).toMatch(/^SU/);
    expect(() => fromPublic(created.account!.busPubKey)).not.toThrow();
    expect(created.account!.busPubKey).toMatch(/^U[A-Z2-7]{55}$/);
    expect(JSON.stringify(await db.table('bus_accounts').select())).not.toContain(created.seed);

    await tokens.revokeBusAccount(managerOrg, created.account!.id);
    expect(await tokens.listBusAccounts(managerOrg)).toEqual([
      expect.objectContaining({ id: created.account!.id, revoked: true, clusterId: 'c-1' }),
    ]);
    await expect(tokens.revokeBusAccount(managerOrg, 999999)).rejects.toMatchObject({
      kind: 'input',
      message: 'bus user 999999 not found',
    });
  });

  it('finds a bus account by its public key, with the owning organization, revoked or not', async () => {
    const created = await tokens.createBusAccount({
      orgId: managerOrg,
      clusterId: '0b7d4c1e-0000-4000-8000-000000000001',
      productName: '',
    });
    const key = created.account!.busPubKey;
    expect(await tokens.getBusAccountByKey(key)).toEqual({
      account: expect.objectContaining({
        id: created.account!.id,
        busPubKey: key,
        clusterId: '0b7d4c1e-0000-4000-8000-000000000001',
        revoked: false,
      }),
      orgId: managerOrg,
    });
    expect(Number((await tokens.getBusAccountByKey(key)).account!.uid)).toBe(Number(created.account!.uid));
    await tokens.revokeBusAccount(managerOrg, created.account!.id);
    expect((await tokens.getBusAccountByKey(key)).account!.revoked).toBe(true);
    await expect(tokens.getBusAccountByKey('U' + 'A'.repeat(55))).rejects.toMatchObject({ kind: 'not-found' });
    await expect(tokens.getBusAccountByKey('')).rejects.toMatchObject({ kind: 'not-found' });
  });

  it('deletes only the system admin’s own tokens', async () => {
    await expect(tokens.deleteSystemAdminToken(managerOrg, 424242)).rejects.toMatchObject({ kind: 'not-found' });
  });
});
