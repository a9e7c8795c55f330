import { keptClusters } from '@platform/clusters-client';
import { announcingBackgroundWrites } from '@platform/db';
import { openObjectStorage } from '@platform/object-storage';
import { announcingWrites, defineApp, SecretBox, startService } from '@platform/service-kit';
import { migrations } from '../migrations';
import { contractsLicensingEnv, type ContractsLicensingConfig } from './config';
import { authorityFromConfig } from './licensing/authority';
import { createContracts } from './contracts/contracts';
import { clustersClient, clustersInventory } from './contracts/inventory';
import { contractsChangedNotice } from './contracts-changed';
import { CONTRACTS_READS, contractsService } from './contracts/service';
import { ContractEndings } from './contracts/endings';
import { Licenses } from './licenses/licenses';
import { billingClient, billingUsage, measureQuota } from './licenses/quota';
import { startLicenseMetrics } from './licenses/license-metrics';
import { holderAccountsClient, LicenseRegistration, REGISTER_LICENSE_EFFECT } from './licenses/registration';
import { LICENSING_READS, licensingService } from './licenses/service';
import { ContractsStore } from './contracts/contracts-store';
import { smtpMailer } from './notices/mailer';
import { Notices } from './notices/notices';
import { notificationsService } from './notices/service';
import { Webhooks } from './notices/webhooks';
import { contractsLicensingService } from './service';

/** Its schema and the migrations that make it. */
const DATABASE = { schema: 'contracts', migrations };

/** Starts the contracts-licensing service: contracts, contract clusters, audit events and issued licenses */
export const contractsLicensingApp = defineApp({
  name: 'contracts-licensing',
  env: contractsLicensingEnv,
  database: DATABASE,
  start: startContractsLicensing,
});

function startContractsLicensing(config: ContractsLicensingConfig) {
  const storage = openObjectStorage(config);
  const clusters = clustersClient(config.CLUSTERS_GRPC_ADDR);
  const billing = billingClient(config.BILLING_DASHBOARD_GRPC_ADDR);
  // License holders' accounts, found or made at registration.
  const accounts = holderAccountsClient(config.ORGS_TEAMS_GRPC_ADDR);
  const mailer = smtpMailer(config);
  let stopMetrics: (() => void) | undefined;
  let notices: Notices | undefined;
  let webhooks: Webhooks | undefined;
  let unfollowInventory: (() => Promise<void>) | undefined;
  let endings: ContractEndings | undefined;
  return startService(
    {
      name: 'contracts-licensing',
      protoPackage: 'contractslicensing',
      database: DATABASE,
      // Publishes and consumes events (docs/architecture.md); readiness follows the bus connection.
      bus: true,
      grpc: async ({ db, log, outbox, bus }) => {
        // The platform CA exists from the first start on (docs/licensing.md), before any license is asked for.
        const authority = await authorityFromConfig(db!, config, () => log.info('generated the platform license CA'));
        // What the inventory answered, kept here by clusters' own read model (@platform/clusters-client) and evicted by
        // its notices: a contract read is one call.
        const keptInventory = keptClusters(clusters, { reader: 'contracts', ttlMs: config.INVENTORY_CACHE_TTL_MS });
        unfollowInventory = await keptInventory.readModel.follow(bus!);
        const inventory = clustersInventory(keptInventory.client);
        const contracts = createContracts(db!, storage, inventory, log);
        const licenses = new Licenses(db!, authority, contracts, inventory, billingUsage(billing), log);
        stopMetrics = startLicenseMetrics(db!, log, config.LICENSE_METRICS_INTERVAL_MS);
        // Quota and expiry notices, by mail and webhook (docs/notifications.md); decisions and sends go through the outbox.
        const store = ContractsStore.create(db!);
        const secrets = await SecretBox.fromConfig(config.SECRETS_ENCRYPTION_KEY, config.DATA_DIR);
        // The readers keep what this service answers (@platform/contracts-licensing-client) until this notice.
        const notice = contractsChangedNotice(bus!, log);
        webhooks = new Webhooks(
          db!,
          secrets,
          config,
          {
            mail: (mail, ownerId, key) => notices!.deliverMail(mail, ownerId, key),
            audit: (contractId, event, trx) => store.event(contractId, 'notifications', event, trx),
            changed: notice,
          },
          log,
        );
        notices = new Notices(db!, store, inventory, billingUsage(billing), mailer, webhooks, log);
        // A registration that makes its holder an account is an operation across orgs-teams and this service: the
        // outbox carries one a crash interrupted to its end (registration.ts).
        const registration = new LicenseRegistration(licenses, accounts, config.DEPLOYMENT_TYPE !== 'Hosted');
        // Background work announces what it wrote as a write method does: the readers keep notice mails, webhook
        // deliveries, registrations and contracts' audit trails.
        const announcedIfWritten = announcingBackgroundWrites(db!, notice);
        const box = outbox({
          ...Object.fromEntries(Object.entries(notices.effects()).map(([name, effect]) => [name, announcedIfWritten.effect(effect)])),
          [REGISTER_LICENSE_EFFECT]: announcedIfWritten.effect(registration.effect()),
        });
        notices.useOutbox(box);
        registration.use(box);
        if (!config.SMTP_URL) log.info('SMTP_URL is not set: notice mails are kept and shown to site admins in the console');
        notices.start(config.NOTICE_SWEEP_INTERVAL_MS, notice);
        webhooks.start(Math.min(config.WEBHOOK_RETRY_BASE_MS, 1_000));
        // A contract ending is announced as a write is; every write may set an earlier end, so the next one is found again.
        endings = new ContractEndings(db!, notice, log);
        await endings.schedule();
        const changed = async () => {
          await notice();
          void endings?.schedule();
        };
        return [
          contractsLicensingService(),
          announcingWrites(
            contractsService(contracts, (ref) => measureQuota(ref, store, inventory, billingUsage(billing))),
            CONTRACTS_READS,
            changed,
          ),
          announcingWrites(licensingService(licenses, registration, authority.certificatePem), LICENSING_READS, changed),
          announcingWrites(
            notificationsService(notices, webhooks),
            ['listWebhookEndpoints', 'listWebhookDeliveries', 'listNoticeMails'],
            changed,
          ),
        ];
      },
      onStop: async () => {
        endings?.stop();
        stopMetrics?.();
        await unfollowInventory?.();
        await notices?.stop();
        await webhooks?.stop();
        mailer.close();
        clusters.close();
        billing.close();
        accounts.close();
        storage.close();
      },
    },
    config,
  );
}
