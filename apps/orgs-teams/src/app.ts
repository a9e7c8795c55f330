import * as path from 'node:path';
import { ACCOUNTS_CHANGED, ORGS_CHANGED, type AccountsChanged, type OrgsChanged } from '@platform/bus';
import { UnavailableError } from '@platform/errors';
import {
  createCallContext,
  createClient,
  defineApp,
  FailureLimiter,
  publicUrlOf,
  SecretBox,
  startService,
  withRetries,
  type Logger,
  type RetryPolicy,
} from '@platform/service-kit';
import { migrations } from '../migrations';
import { kubernetesApiUrl, orgsTeamsEnv, type OrgsTeamsConfig } from './config';
import { Identity } from './identity/identity';
import { orgsTeamsService } from './identity/service';
import { UserAdmin, userAdminEffects } from './accounts/user-admin';
import { Sessions } from './identity/sessions';
import { GroupMappings } from './accounts/group-mappings';
import { GroupMappingStore } from './identity/group-mapping-store';
import { ExternalSignIn } from './identity/oidc';
import { EmailVerification, verificationMailEffects } from './identity/email-verification';
import { notificationsV1 } from '@platform/proto';
import { TwoFactor } from './identity/totp';
import { BOOTSTRAP_PASSWORD_FILE, ensureSiteAdmin, type SiteAdminSettings } from './identity/site-admin';
import { ensureAdminOrg } from './orgs/admin-org';
import { Relationships } from './relationships';
import { GrpcOrgAuthz } from './orgs/org-authz';
import { organizationsService } from './orgs/service';
import { Organizations } from './orgs/organizations';
import type { OrgsContext } from './orgs/orgs-context';
import { OrgCache } from './orgs/org-cache';
import { TeamListCache } from './orgs/team-list-cache';
import { TeamMembers } from './orgs/team-members';
import { Teams } from './orgs/teams';
import { orgEffects } from './orgs/effects';
import { clusterConnectionsClient } from './orgs/cluster-connections';
import { openObjectStorage } from '@platform/object-storage';
import { siteSettingsService } from './settings/service';
import { auditService } from './audit/service';
import { avatarsService } from './avatars/service';
import { Avatars } from './avatars/avatars';
import { orgTokensService } from './org-tokens/service';
import { OrgTokens } from './org-tokens/org-tokens';
import { orgClaimsService } from './claims/service';
import { withOrgsTeamsLimits } from './limits';
import { KubernetesTokens, TokenReviewer } from './service-accounts/kubernetes-tokens';
import { ServiceAccounts } from './service-accounts/service-accounts';
import { serviceAccountsService } from './service-accounts/service';
import { serviceAccountEffects } from './service-accounts/tuples';

/** orgs-teams: identity (accounts, tokens), organizations and teams. */
export const orgsTeamsApp = defineApp({ name: 'orgs-teams', env: orgsTeamsEnv, start: startOrgsTeams });

function startOrgsTeams(config: OrgsTeamsConfig) {
  const kubernetesUrl = kubernetesApiUrl(config);
  const relationships = new Relationships(config.AUTHZ_GRPC_ADDR);
  const orgAuthz = new GrpcOrgAuthz(relationships, config.AUTHZ_GRPC_ADDR);
  const storage = openObjectStorage(config);
  const clusters = clusterConnectionsClient(config.CLUSTERS_GRPC_ADDR);
  // Mails verifying addresses go out through contracts-licensing's mailer, so they are sent or kept as notices are.
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
      database: { schema: 'identity', migrations },
      // Only to tell the gateways which accounts' tokens changed (their token caches); readiness does not follow it.
      bus: 'notices',
      async grpc({ db, log, bus, outbox: openOutbox }) {
        const accountsChanged = async (userIds: number[]) => {
          // Best effort: a gateway that misses it keeps the entry for at most AUTH_CACHE_TTL_MS.
          await bus!
            .notify(ACCOUNTS_CHANGED, { userIds } satisfies AccountsChanged)
            .catch((err) => log.warn({ err }, 'could not send a token-cache notice'));
        };
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
        const outbox = openOutbox({
          ...orgEffects(db!, orgAuthz, (orgId, key) => avatars.discardUnused(orgId, key), accountsChanged, clusters),
          ...serviceAccountEffects(db!, orgAuthz),
          ...userAdminEffects(db!, orgAuthz),
          ...verificationMailEffects(secrets, publicUrlOf(config), async (mail) => void (await notifications.sendMail(mail))),
        });
        const verification = new EmailVerification(db!, outbox, secrets, config.VERIFICATION_MAIL_INTERVAL * 1000);
        const serviceAccounts = new ServiceAccounts(db!, outbox, orgAuthz, accountsChanged);
        const orgTokens = new OrgTokens(db!, secrets, accountsChanged);
        const admin = {
          username: config.PLATFORM_ADMIN_USERNAME,
          email: config.PLATFORM_ADMIN_EMAIL,
          password: config.PLATFORM_ADMIN_PASSWORD,
          passwordFile: path.join(config.DATA_DIR, BOOTSTRAP_PASSWORD_FILE),
        };
        // The bootstrap is no call: it gets a context of its own (a request id for its authz calls, no deadline).
        const bootstrap = createCallContext(log);
        await withAuthzRetry(() => ensureSiteAdmin(identity, relationships, admin satisfies SiteAdminSettings, bootstrap), log);
        const orgCache = new OrgCache(config.ORG_CACHE_TTL_MS);
        const teamLists = new TeamListCache(config.ORG_CACHE_TTL_MS);
        // Other replicas' changes and authz's, each checked against a fence before a kept answer is served.
        const unfollow = [await orgCache.follow(bus!), await teamLists.follow(bus!)];
        stopListening = async () => {
          for (const stop of unfollow) await stop();
        };
        // Awaited before the write answers, so the bus has the notice in its order before the client hears of the
        // change: another replica's fence then proves it handled it (the very next request anywhere sees the change).
        // A notice that cannot be sent is logged; a replica that misses it serves the old row for at most
        // ORG_CACHE_TTL_MS.
        const notifyOrgChanged = (orgId: number) =>
          bus!
            .notify(ORGS_CHANGED, { orgIds: [orgId] } satisfies OrgsChanged)
            .catch((err) => log.warn({ err }, 'could not send an organization-cache notice'));
        const orgsContext: OrgsContext = {
          db: db!,
          adminOrg: config.PLATFORM_ADMIN_ORG,
          outbox,
          cache: orgCache,
          orgChanged: (orgId) => {
            orgCache.evict(orgId);
            teamLists.evict(orgId);
            return notifyOrgChanged(orgId);
          },
          teamLists,
          teamsChanged: (orgId) => {
            teamLists.evict(orgId);
            return notifyOrgChanged(orgId);
          },
          // What other features keep for an organization goes with it: its system admin, its service accounts, its avatar.
          onOrgDelete: async (trx, orgId, stage) => {
            await orgTokens.onOrgDelete(trx, orgId, stage);
            await serviceAccounts.onOrgDelete(trx, orgId, stage);
            await avatars.onOrgDelete(trx, orgId, stage);
          },
        };
        if (config.PLATFORM_ADMIN_ORG) {
          const slug = config.PLATFORM_ADMIN_ORG;
          await withAuthzRetry(() => ensureAdminOrg(identity, new Organizations(orgsContext, orgAuthz), slug, bootstrap), log);
        }
        const organizations = new Organizations(orgsContext, orgAuthz);
        const userAdmin = new UserAdmin(
          db!,
          outbox,
          identity,
          {
            deleteWithin: (trx, stage, orgId) => organizations.deleteWithin(trx, stage, orgId),
            orgChanged: async (orgId) => orgsContext.orgChanged?.(orgId),
            adminOrg: config.PLATFORM_ADMIN_ORG,
          },
          accountsChanged,
        );
        const sessions = new Sessions(
          db!,
          identity,
          { idleSeconds: config.SESSION_IDLE_TIMEOUT, maxSeconds: config.SESSION_MAX_LIFETIME },
          new FailureLimiter({ max: config.SIGNUP_MAX_PER_ADDRESS, windowMs: config.SIGNUP_WINDOW * 1000 }),
          accountsChanged,
          verification,
        );
        stopCleanup = sessions.startCleanup(log);
        const groupMappings = new GroupMappings(db!, new TeamMembers(orgsContext, new Teams(orgsContext, orgAuthz)), userAdmin, log);
        const externalSignIn = new ExternalSignIn(db!, identity, sessions, (userId, groups) => groupMappings.apply(userId, groups));
        return withOrgsTeamsLimits([
          orgsTeamsService(
            identity,
            relationships,
            accountsChanged,
            userAdmin,
            sessions,
            twoFactor,
            externalSignIn,
            new GroupMappingStore(db!),
            verification,
          ),
          organizationsService(orgsContext, orgAuthz),
          siteSettingsService(db!, {
            runMode: config.RUN_MODE,
            deploymentType: config.DEPLOYMENT_TYPE,
            isOfflineInstaller: config.OFFLINE_INSTALLER,
          }),
          avatarsService(avatars),
          auditService(db!),
          orgTokensService(orgTokens),
          orgClaimsService(db!, outbox),
          serviceAccountsService(serviceAccounts),
        ]);
      },
      onStop: async () => {
        stopCleanup?.();
        await stopListening?.();
        relationships.close();
        orgAuthz.close();
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
      if (failed === 1) log.warn('authz is not reachable yet; retrying the site-admin bootstrap');
      return true;
    },
    fn,
  );
}
