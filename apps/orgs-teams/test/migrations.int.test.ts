import type { Knex } from 'knex';
import { describeMigrationRoundTrips } from '@platform/service-testing';
import { migrations } from '../migrations';

const USER = 1;
const ORG = 2;
const TEAM = 3;

const table = (knex: Knex, schema: string, name: string) => knex.withSchema(schema).table(name);

/** The rows every migration after orgs_teams must leave alone: a user, an organization, its owner team and a token. */
async function expectIdentitySurvived(knex: Knex, schema: string): Promise<void> {
  expect(await table(knex, schema, 'accounts').orderBy('id').select('id', 'type', 'lower_login')).toEqual([
    { id: USER, type: 0, lower_login: 'alice' },
    { id: ORG, type: 1, lower_login: 'acme' },
  ]);
  expect(await table(knex, schema, 'access_tokens').select('uid', 'name')).toEqual([{ uid: USER, name: 'cli' }]);
  expect(await table(knex, schema, 'teams').select('id', 'org_id', 'permission')).toEqual([{ id: TEAM, org_id: ORG, permission: 'owner' }]);
  expect(await table(knex, schema, 'team_users').select('team_id', 'uid')).toEqual([{ team_id: TEAM, uid: USER }]);
  expect(await table(knex, schema, 'org_users').select('org_id', 'uid')).toEqual([{ org_id: ORG, uid: USER }]);
}

describeMigrationRoundTrips('identity', migrations, {
  '20261122020000_orgs_teams': {
    async before(knex, schema) {
      await table(knex, schema, 'accounts').insert([
        { id: USER, type: 0, login: 'Alice', lower_login: 'alice', email: 'alice@example.com', lower_email: 'alice@example.com' },
        { id: ORG, type: 1, login: 'Acme', lower_login: 'acme' },
      ]);
      await table(knex, schema, 'access_tokens').insert({
        uid: USER,
        name: 'cli',
        token_hash: 'a'.repeat(64),
        token_last_eight: 'aaaaaaaa',
      });
    },
    async after(knex, schema) {
      // Existing organizations become public ones with no manager endpoint.
      expect(await table(knex, schema, 'accounts').orderBy('id').select('id', 'login', 'visibility', 'manager_endpoint')).toEqual([
        { id: USER, login: 'Alice', visibility: 0, manager_endpoint: '' },
        { id: ORG, login: 'Acme', visibility: 0, manager_endpoint: '' },
      ]);
      expect(await table(knex, schema, 'access_tokens').pluck('name')).toEqual(['cli']);
    },
  },
  '20261122030000_site_settings': {
    async before(knex, schema) {
      await table(knex, schema, 'teams').insert({
        id: TEAM,
        org_id: ORG,
        name: 'Owners',
        lower_name: 'owners',
        permission: 'owner',
        type: 'general',
      });
      await table(knex, schema, 'team_users').insert({ team_id: TEAM, org_id: ORG, uid: USER });
      await table(knex, schema, 'org_users').insert({ org_id: ORG, uid: USER });
    },
    async after(knex, schema) {
      await expectIdentitySurvived(knex, schema);
      // The one settings row exists from the start, every option at its default.
      expect(await table(knex, schema, 'site_settings').select('id', 'app_name', 'disable_registration')).toEqual([
        { id: 1, app_name: null, disable_registration: false },
      ]);
      await table(knex, schema, 'org_avatars').insert({ org_id: ORG, source: 'lookup', email: 'acme@example.com' });
    },
  },
  '20261122040000_org_tokens': {
    async before(knex, schema) {
      await table(knex, schema, 'site_settings').update({ app_name: 'Platform', disable_registration: true });
      await table(knex, schema, 'allowed_domains').insert({ name: 'example.com', created_by: USER });
    },
    async after(knex, schema) {
      await expectIdentitySurvived(knex, schema);
      expect(await table(knex, schema, 'site_settings').select('app_name', 'disable_registration')).toEqual([
        { app_name: 'Platform', disable_registration: true },
      ]);
      expect(await table(knex, schema, 'allowed_domains').pluck('name')).toEqual(['example.com']);
      const [token] = await table(knex, schema, 'access_tokens').pluck('id');
      await table(knex, schema, 'org_system_admins').insert({ org_id: ORG, uid: USER });
      await table(knex, schema, 'manager_sync_tokens').insert({ org_id: ORG, token_id: token });
    },
  },
  '20261122050000_outbox': {
    async after(knex, schema) {
      await expectIdentitySurvived(knex, schema);
      expect(await table(knex, schema, 'outbox').count({ n: '*' })).toEqual([{ n: 0 }]);
    },
  },
  '20261123000000_scoped_tokens': {
    async after(knex, schema) {
      await expectIdentitySurvived(knex, schema);
      // Existing tokens stay unrestricted.
      expect(await table(knex, schema, 'access_tokens').select('name', 'scope', 'scope_account_id')).toEqual([
        { name: 'cli', scope: '', scope_account_id: null },
      ]);
      await table(knex, schema, 'org_claims').insert({ claim_id: '00000000-0000-4000-8000-000000000001', org_id: ORG });
    },
  },
  '20261123010000_claim_backoff': {
    async after(knex, schema) {
      await expectIdentitySurvived(knex, schema);
      // Claims made before have no backoff and are not flagged: claimable as they were.
      expect(await table(knex, schema, 'org_claims').select('org_id', 'retry_after', 'flagged_claimable')).toEqual([
        { org_id: ORG, retry_after: null, flagged_claimable: false },
      ]);
    },
  },
  '20261125000000_service_accounts': {
    async after(knex, schema) {
      await expectIdentitySurvived(knex, schema);
      // Users and organizations are no service accounts: they belong to no organization and were created by no one.
      expect(await table(knex, schema, 'accounts').orderBy('id').select('service_account_org_id', 'created_by')).toEqual([
        { service_account_org_id: null, created_by: null },
        { service_account_org_id: null, created_by: null },
      ]);
      await expect(table(knex, schema, 'accounts').where({ id: USER }).update({ service_account_org_id: ORG })).rejects.toThrow(
        /accounts_service_account_org_check/,
      );
    },
  },
  '20261230000000_email_verification': {
    async before(knex, schema) {
      await table(knex, schema, 'external_identities').del();
      await table(knex, schema, 'accounts').insert({ id: 10, type: 0, login: 'Bob', lower_login: 'bob', email: 'bob@example.com', lower_email: 'bob@example.com' });
      // Bob was reached by two subjects of one provider (an unverified e-mail's takeover); Alice by one.
      await table(knex, schema, 'external_identities').insert([
        { issuer: 'https://idp.example', subject: 'first', uid: 10 },
        { issuer: 'https://idp.example', subject: 'second', uid: 10 },
        { issuer: 'https://idp.example', subject: 'alice', uid: USER },
      ]);
    },
    async after(knex, schema) {
      // Accounts made before the rule count as verified; new ones do not unless made so.
      expect(await table(knex, schema, 'accounts').whereIn('id', [USER, 10]).orderBy('id').pluck('email_verified')).toEqual([true, true]);
      await table(knex, schema, 'accounts').insert({ id: 11, type: 0, login: 'Carol', lower_login: 'carol', email: 'c@example.com', lower_email: 'c@example.com' });
      expect(await table(knex, schema, 'accounts').where({ id: 11 }).first('email_verified')).toEqual({ email_verified: false });
      // Neither subject that reached Bob keeps it; Alice's single link stays.
      expect(await table(knex, schema, 'external_identities').select('subject', 'uid')).toEqual([{ subject: 'alice', uid: USER }]);
      await expect(
        table(knex, schema, 'external_identities').insert({ issuer: 'https://idp.example', subject: 'other', uid: USER }),
      ).rejects.toThrow(/external_identities_issuer_uid_unique/);
      await table(knex, schema, 'accounts').where({ id: 11 }).del();
      await table(knex, schema, 'external_identities').del();
      await table(knex, schema, 'accounts').where({ id: 10 }).del();
    },
  },
});
