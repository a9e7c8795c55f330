import * as path from 'node:path';
import { tuplesTableHere } from '@platform/authz-client';
import { UnavailableError, withRetries, type RetryPolicy } from '@platform/errors';
import {
  createCallContext,
  createClient,
  defineApp,
  FailureLimiter,
  publicUrlOf,
  SecretBox,
  startService,
  type Logger,
} from '@platform/service-kit';
import { migrations } from '../migrations';
import { kubernetesApiUrl, orgsTeamsEnv, type OrgsTeamsConfig } from './config';
import { announcedEffects, announcedWrites, announcingChanges, ChangeAnnouncer, watchStatements } from './changes';
import { Identity } from './identity/identity';
import { ORGS_TEAMS_READS, orgsTeamsService } from './identity/service';
import { UserAdmin, userAdminEffects } from './accounts/user-admin';
import { Sessions } from './identity/sessions';
import { GroupMappings } from './accounts/group-mappings';
import { GroupMappingStore } from './identity/group-mapping-store';
import { ExternalSignIn } from './identity/oidc';
import { EmailVerification, verificationMailEffects } from './identity/email-verification';
import { PasswordReset, passwordResetMailEffects } from './identity/password-reset';
import { AuditStore } from './audit/audit-store';
import { notificationsV1 } from '@platform/proto';
import { TwoFactor } from './identity/totp';
import { BOOTSTRAP_PASSWORD_FILE, ensureSiteAdmin, type SiteAdminSettings } from './identity/site-admin';
import { ensureAdminOrg } from './orgs/admin-org';
import { Relationships } from './relationships';
import { GrpcOrgAuthz } from './orgs/org-authz';
import { GrpcImportRoles } from './orgs/import/import-roles';
import { ORGANIZATIONS_READS, organizationsService } from './orgs/service';
import { Organizations } from './orgs/organizations';
import type { OrgsContext } from './orgs/orgs-context';
import { OrgCache } from './orgs/org-cache';
import { TeamMembers } from './orgs/team-members';
import { Teams } from './orgs/teams';
import { orgEffects } from './orgs/effects';
import { clusterConnectionsClient } from './orgs/cluster-connections';
import { openObjectStorage } from '@platform/object-storage';
import { SITE_SETTINGS_READS, siteSettingsService } from './settings/service';
import { AUDIT_READS, auditService } from './audit/service';
import { AVATARS_READS, avatarsService } from './avatars/service';
import { Avatars } from './avatars/avatars';
import { ORG_TOKENS_READS, orgTokensService } from './org-tokens/service';
import { OrgTokens } from './org-tokens/org-tokens';
import { ORG_CLAIMS_READS, orgClaimsService } from './claims/service';
import { withOrgsTeamsLimits } from './limits';
import { KubernetesTokens, TokenReviewer } from './service-accounts/kubernetes-tokens';
import { ServiceAccounts } from './service-accounts/service-accounts';
import { SERVICE_ACCOUNTS_READS, serviceAccountsService } from './service-accounts/service';
import { serviceAccountEffects } from './service-accounts/tuples';

/** Its schema and the migrations that make it. */
const DATABASE = { schema: 'identity', migrations };

/** orgs-teams: identity (accounts, tokens), organizations and teams. */
export const orgsTeamsApp = defineApp({ name: 'orgs-teams', env: orgsTeamsEnv, database: DATABASE, start: startOrgsTeams });

function startOrgsTeams(config: OrgsTeamsConfig) {
  const kubernetesUrl = kubernetesApiUrl(config);
  const relationships = new Relationships(config.AUTHZ_GRPC_ADDR);
  const orgAuthz = new GrpcOrgAuthz(relationships, config.AUTHZ_GRPC_ADDR);
  const importRoles = new GrpcImportRoles(config.AUTHZ_GRPC_ADDR);
  const storage = openObjectStorage(config);
  const clusters = clusterConnectionsClient(config.CLUSTERS_GRPC_ADDR);
  // Mails verifying addresses and resetting passwords go out through contracts-licensing's mailer, so they are sent or
  // kept as notices are.
  const notifications = createClient(notificationsV1.NotificationsServiceService, config.CONTRACTS_LICENSING_GRPC_ADDR, {
    name: 'contracts-licensing',
    deadlineMs: 60_000,
    idempotent: ['sendMail'],
  });
  let stopListening: (() => Promise<void>) | undefined;
  let stopCleanup: (() => void) | undefined;
  return startService(
    {
      name: 'orgs-teams',
      protoPackage: 'orgsteams',
      database: DATABASE,
      // To tell its readers what its writes changed (changes.ts), and follow the other replicas'; readiness does not follow it.
      bus: 'notices',
      async grpc({ db, log, bus, outbox: openOutbox }) {
        const orgCache = new OrgCache(config.ORG_CACHE_TTL_MS);
        // Every write announces what it changed: each call of a write method, each outbox effect, each background pass.
        const announcer = new ChangeAnnouncer(db!.schema, bus, log, orgCache);
        watchStatements(db!);
        // Kubernetes ServiceAccount tokens authenticate service accounts only when an audience is set for them.
        const kubernetesTokens = kubernetesUrl
          ? new KubernetesTokens(
              db!,
              new TokenReviewer(
                { url: kubernetesUrl, tokenFile: config.KUBERNETES_API_TOKEN_FILE, caFile: config.KUBERNETES_API_CA_FILE },
                config.KUBERNETES_TOKEN_AUDIENCE!,
                log,
              ),
            )
          : undefined;
        const secrets = await SecretBox.fromConfig(config.SECRETS_ENCRYPTION_KEY, config.DATA_DIR);
        // One count of failed sign-ins per account, for passwords and second-factor codes wherever they are given.
        const accountFailures = new FailureLimiter({
          max: config.LOGIN_MAX_FAILURES_PER_ACCOUNT,
          windowMs: config.LOGIN_FAILURE_WINDOW_SECONDS * 1000,
        });
        const twoFactor = new TwoFactor(db!, secrets, accountFailures);
        const identity = new Identity(db!, accountFailures, kubernetesTokens, twoFactor);
        const avatars = new Avatars(db!, storage, { maxBytes: config.AVATAR_MAX_BYTES }, log);
        const outbox = openOutbox(
          announcedEffects(announcer, {
            ...orgEffects(db!, orgAuthz, (orgId, key) => avatars.discardUnused(orgId, key), clusters),
            ...serviceAccountEffects(db!, orgAuthz),
            ...userAdminEffects(db!, orgAuthz),
            ...verificationMailEffects(secrets, publicUrlOf(config), async (mail) => void (await notifications.sendMail(mail))),
            ...passwordResetMailEffects(secrets, publicUrlOf(config), async (mail) => void (await notifications.sendMail(mail))),
          }),
        );
        const verification = new EmailVerification(db!, outbox, secrets, config.VERIFICATION_MAIL_INTERVAL * 1000);
        const passwordReset = new PasswordReset(
          db!,
          outbox,
          secrets,
          accountFailures,
          AuditStore.create(db!),
          {
            lifetimeMs: config.PASSWORD_RESET_LINK_LIFETIME * 1000,
            maxPerAddress: config.PASSWORD_RESET_MAX_PER_ADDRESS,
            maxPerAccount: config.PASSWORD_RESET_MAX_PER_ACCOUNT,
            windowMs: config.PASSWORD_RESET_WINDOW * 1000,
          },
          log,
        );
        const serviceAccounts = new ServiceAccounts(db!, outbox, orgAuthz);
        const orgTokens = new OrgTokens(db!, secrets, bus!.namespace);
        const admin = {
          username: config.PLATFORM_ADMIN_USERNAME,
          email: config.PLATFORM_ADMIN_EMAIL,
          password: config.PLATFORM_ADMIN_PASSWORD,
          passwordFile: path.join(config.DATA_DIR, BOOTSTRAP_PASSWORD_FILE),
        };
        // The bootstrap is no call: it gets a context of its own (a request id for its authz calls, no deadline).
        const bootstrap = createCallContext(log);
        const bootstrapping = (work: () => Promise<void>) => withAuthzRetry(() => announcingChanges(announcer, work), log);
        await bootstrapping(() => ensureSiteAdmin(identity, relationships, admin satisfies SiteAdminSettings, bootstrap));
        // Other replicas' changes, checked against a fence before a kept row is served.
        stopListening = await orgCache.follow(bus!);
        // authz's tuples in this database (its embedded engine on the platform's Postgres): written by the statements
        // that make organizations, teams and members (D134). Else, or before authz wrote there, authz is asked after each change.
        const tuplesInStatement = !!config.DATABASE_URL && !config.OPENFGA_API_URL && (await tuplesTableHere(db!.knex));
        log.info(
          { tuplesInStatement },
          tuplesInStatement
            ? "new organizations', teams' and members' tuples are written with their rows"
            : 'tuples are written by authz after each change',
        );
        const orgsContext: OrgsContext = {
          db: db!,
          adminOrg: config.PLATFORM_ADMIN_ORG,
          outbox,
          cache: orgCache,
          tuplesInStatement,
          // What other features keep for an organization goes with it: its system admin, its service accounts, its avatar.
          onOrgDelete: async (trx, orgId, stage) => {
            await orgTokens.onOrgDelete(trx, orgId);
            await serviceAccounts.onOrgDelete(trx, orgId, stage);
            await avatars.onOrgDelete(trx, orgId, stage);
          },
        };
        if (config.PLATFORM_ADMIN_ORG) {
          const slug = config.PLATFORM_ADMIN_ORG;
          await bootstrapping(() => ensureAdminOrg(identity, new Organizations(orgsContext, orgAuthz), slug, bootstrap));
        }
        const organizations = new Organizations(orgsContext, orgAuthz);
        const userAdmin = new UserAdmin(db!, outbox, identity, {
          deleteWithin: (trx, stage, orgId) => organizations.deleteWithin(trx, stage, orgId),
          adminOrg: config.PLATFORM_ADMIN_ORG,
        });
        const sessions = new Sessions(
          db!,
          identity,
          { idleSeconds: config.SESSION_IDLE_TIMEOUT, maxSeconds: config.SESSION_MAX_LIFETIME },
          new FailureLimiter({ max: config.SIGNUP_MAX_PER_ADDRESS, windowMs: config.SIGNUP_WINDOW * 1000 }),
          verification,
        );
        stopCleanup = sessions.startCleanup(log, (pass) => announcingChanges(announcer, pass));
        const groupMappings = new GroupMappings(db!, new TeamMembers(orgsContext, new Teams(orgsContext, orgAuthz)), userAdmin, log);
        const externalSignIn = new ExternalSignIn(db!, identity, sessions, (userId, groups) => groupMappings.apply(userId, groups));
        const facts = { runMode: config.RUN_MODE, deploymentType: config.DEPLOYMENT_TYPE, isOfflineInstaller: config.OFFLINE_INSTALLER };
        return withOrgsTeamsLimits([
          announcedWrites(
            orgsTeamsService(
              identity,
              relationships,
              userAdmin,
              sessions,
              twoFactor,
              externalSignIn,
              new GroupMappingStore(db!),
              verification,
              passwordReset,
            ),
            ORGS_TEAMS_READS,
            announcer,
          ),
          announcedWrites(organizationsService(orgsContext, orgAuthz, importRoles), ORGANIZATIONS_READS, announcer),
          announcedWrites(siteSettingsService(db!, facts), SITE_SETTINGS_READS, announcer),
          announcedWrites(avatarsService(avatars), AVATARS_READS, announcer),
          announcedWrites(auditService(db!), AUDIT_READS, announcer),
          announcedWrites(orgTokensService(orgTokens), ORG_TOKENS_READS, announcer),
          announcedWrites(orgClaimsService(db!, outbox), ORG_CLAIMS_READS, announcer),
          announcedWrites(serviceAccountsService(serviceAccounts), SERVICE_ACCOUNTS_READS, announcer),
        ]);
      },
      onStop: async () => {
        stopCleanup?.();
        await stopListening?.();
        relationships.close();
        orgAuthz.close();
        importRoles.close();
        clusters.close();
        notifications.close();
        storage.close();
      },
    },
    config,
  );
}

const AUTHZ_START_RETRY: RetryPolicy = { attempts: 60, baseDelayMs: 1_000, factor: 1, jitter: 'none' };

/** In a cluster authz may start after us: keep trying, once a second, for a minute before giving up the start. */
function withAuthzRetry(fn: () => Promise<void>, log: Logger): Promise<void> {
  return withRetries(
    AUTHZ_START_RETRY,
    (err, failed) => {
      if (!(err instanceof UnavailableError)) return false;
      if (failed === 1) log.warn({ reason: err.message }, 'retrying the bootstrap (site admin, administrative organization)');
      return true;
    },
    fn,
  );
}
