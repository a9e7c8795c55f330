import { announcingBackgroundWrites } from '@platform/db';
import { loadSigningKey, UrlSigner } from '@platform/object-storage';
import { announcingWrites, defineApp, ownDependencyChecks, publicUrlOf, startService } from '@platform/service-kit';
import { migrations } from '../migrations';
import { listenerEnv, type ListenerConfig } from './config';
import { createListenerHttp } from './http';
import { MeteringProxy } from './metering/metering';
import { providerAMetering } from './metering/providera';
import { providerCMetering } from './metering/providerc';
import type { SettingWarning } from './metering/provider';
import type { Marketplace } from './binding-info';
import { addressMatcher, providerARanges } from './notifications/source-address';
import { marketplaceChangedNotice } from './marketplace-changed';
import { MARKETPLACE_LISTENER_READS, marketplaceListenerService } from './service';
import { claimableCheck } from './subscriptions/claimable';
import { MarketplaceListener } from './subscriptions/listener';
import { grpcSubscriberDirectory, type SubscriberDirectory } from './subscriptions/subscribers';

export interface MarketplaceListenerDeps {
  /** Where subscribers are provisioned; by default orgs-teams and contracts-licensing over gRPC. Tests give their own. */
  directory?: (config: ListenerConfig) => SubscriberDirectory;
}

/** Its schema and the migrations that make it. */
const DATABASE = { schema: 'marketplace', migrations };

/** The marketplace webhook listener: its own HTTP root plus a gRPC API for the gateway's installer route. */
export function createMarketplaceListenerApp(deps: MarketplaceListenerDeps = {}) {
  return defineApp({
    name: 'marketplace-listener',
    env: listenerEnv,
    database: DATABASE,
    start: (config: ListenerConfig) => start(config, deps),
  });
}

async function start(config: ListenerConfig, deps: MarketplaceListenerDeps) {
  const directory = (deps.directory ?? defaultDirectory)(config);
  let listener: MarketplaceListener | undefined;
  let changed: (() => Promise<void>) | undefined;
  let announcedIfWritten: ReturnType<typeof announcingBackgroundWrites> | undefined;
  const running = await startService(
    {
      name: 'marketplace-listener',
      protoPackage: 'marketplacelistener',
      database: DATABASE,
      // Only sends notices: the gateways keep what the dashboard's marketplace rows answered until one says it changed.
      bus: 'notices',
      grpc: (svc) => {
        // What the other apps keep of its answers (@platform/marketplace-listener-client) follows this notice: sent by
        // every write method, and by every notification processed and outbox effect applied that wrote (writesDuring).
        changed = marketplaceChangedNotice(svc.bus!, svc.log);
        const background = announcingBackgroundWrites(svc.db!, changed);
        announcedIfWritten = background;
        listener = new MarketplaceListener(svc.db!, directory, svc.log, { claimBackoffSeconds: config.MARKETPLACE_CLAIM_BACKOFF_SECONDS });
        // An effect applied by the relay, long after its request, records the subscriber on its subscription.
        const effects = Object.entries(listener.effects()).map(([kind, effect]) => [kind, background.effect(effect)]);
        listener.useOutbox(svc.outbox(Object.fromEntries(effects)));
        // Every method writes unless named a read, so a write added later is announced too.
        return [announcingWrites(marketplaceListenerService(listener, meteringOf(config, listener)), MARKETPLACE_LISTENER_READS, changed)];
      },
      http: {
        port: config.MARKETPLACE_HTTP_PORT,
        host: config.MARKETPLACE_HTTP_HOST,
        portSetting: 'MARKETPLACE_HTTP_PORT',
        handler: async (ctx) => {
          const signer = new UrlSigner(await loadSigningKey(config));
          const fromProviderA = addressMatcher(providerARanges(config.PROVIDERA_ALLOWED_CIDRS));
          return createListenerHttp({
            log: ctx.log,
            // Its database only: the bus carries its notices, which it copes without (bus: 'notices').
            checks: ownDependencyChecks({ db: ctx.db }),
            trustedProxies: config.MARKETPLACE_TRUSTED_PROXIES,
            notifications: {
              listener: listener!,
              // A notification is answered once what it wrote (a binding, a state, an audit entry) is announced.
              announced: (work) => announcedIfWritten!.pass(work)(),
              signer,
              apiSecret: config.MARKETPLACE_API_SECRET,
              // Dev run mode takes the first provider's notifications from anywhere.
              providerASource: config.RUN_MODE === 'dev' ? undefined : fromProviderA,
              providerCTestInstaller: config.PROVIDERC_TEST_INSTALLER_ID,
              linkTtlSeconds: config.MARKETPLACE_LINK_TTL_SECONDS,
              publicUrl: publicUrlOf(config),
              claimable: claimableCheck(directory, config.MARKETPLACE_CENTRAL_URL),
            },
          });
        },
      },
      onStop: async () => directory.close(),
    },
    config,
  );
  // A start may come with other settings, which the configuration warnings show: the readers drop what they kept.
  await changed?.();
  return running;
}

/** The metered-billing proxy over both metering providers, configured from the environment. */
function meteringOf(config: ListenerConfig, listener: MarketplaceListener): MeteringProxy {
  const retry = { attempts: config.METERING_RETRY_ATTEMPTS, baseDelayMs: config.METERING_RETRY_BASE_MS };
  return new MeteringProxy(
    listener.subscriptions,
    {
      ProviderA: providerAMetering({
        endpoint: config.PROVIDERA_METERING_ENDPOINT,
        region: config.PROVIDERA_METERING_REGION,
        productCode: config.PROVIDERA_PRODUCT_CODE,
        accessKeyId: config.PROVIDERA_ACCESS_KEY_ID,
        secretAccessKey: config.PROVIDERA_SECRET_ACCESS_KEY,
        readinessDimension: config.PROVIDERA_READINESS_DIMENSION,
        retry,
      }),
      ProviderC: providerCMetering({
        endpoint: config.PROVIDERC_SERVICE_CONTROL_ENDPOINT,
        serviceName: config.PROVIDERC_SERVICE_NAME,
        keyFile: config.PROVIDERC_SERVICE_ACCOUNT_KEY_FILE,
        key: config.PROVIDERC_SERVICE_ACCOUNT_KEY,
        defaultConsumerId: config.PROVIDERC_CONSUMER_ID,
        retry,
        timeoutMs: config.METERING_TIMEOUT_MS,
      }),
    },
    (marketplace) => listenerWarnings(config, marketplace),
  );
}

/** What a marketplace's notifications need, and which of it is missing or unsafe. */
function listenerWarnings(config: ListenerConfig, marketplace: Marketplace): SettingWarning[] {
  const w: SettingWarning[] = [];
  if (marketplace !== 'ProviderA' && !config.MARKETPLACE_API_SECRET) {
    w.push({ Level: 'Error', Msg: `MARKETPLACE_API_SECRET is not set: ${marketplace} notifications are refused (403)` });
  }
  if (marketplace === 'ProviderA') {
    if (config.RUN_MODE === 'dev') w.push({ Level: 'Warning', Msg: 'RUN_MODE=dev: notifications are taken from any address' });
    if (!config.MARKETPLACE_TRUSTED_PROXIES || config.MARKETPLACE_TRUSTED_PROXIES.length === 0) {
      w.push({
        Level: 'Warning',
        Msg: 'MARKETPLACE_TRUSTED_PROXIES is not set: behind the gateway every notification comes from the gateway’s address',
      });
    }
  }
  if (marketplace === 'ProviderC' && config.PROVIDERC_TEST_INSTALLER_ID) {
    w.push({ Level: 'Warning', Msg: `PROVIDERC_TEST_INSTALLER_ID ${config.PROVIDERC_TEST_INSTALLER_ID} binds without the secret` });
  }
  return w;
}

const defaultDirectory = (config: ListenerConfig) =>
  grpcSubscriberDirectory({
    orgsTeams: config.ORGS_TEAMS_GRPC_ADDR,
    contracts: config.CONTRACTS_LICENSING_GRPC_ADDR,
    adminLogin: config.PLATFORM_ADMIN_USERNAME,
    contractDays: config.MARKETPLACE_CONTRACT_DAYS,
  });

/** The listener over orgs-teams and contracts-licensing. */
export const marketplaceListenerApp = createMarketplaceListenerApp();
