import type { Unsubscribe } from '@platform/bus';
import { announcingBackgroundWrites } from '@platform/db';
import { announcingWrites, defineApp, startService } from '@platform/service-kit';
import { migrations } from '../migrations';
import { ClientOrgs } from './client-orgs/client-orgs';
import { ClientOrgProvisioning, PROVISION_CLIENT_ORG_EFFECT } from './client-orgs/provisioning';
import { CLIENT_ORGS_READS, clientOrgsService } from './client-orgs/service';
import { ClusterSets } from './cluster-sets/cluster-sets';
import { CLUSTER_SETS_READS, clusterSetsService } from './cluster-sets/service';
import { ANY_CLUSTER, announcingChanges, clustersChangedNotice, clustersServiceChange } from './clusters-changed';
import { clustersEnv, type ClustersConfig } from './config';
import { DESIRED_STATE_EFFECT, DesiredStates } from './desired-state/desired-state';
import { FeatureSets } from './feature-sets/feature-sets';
import { FEATURE_SETS_READS, featureSetsService } from './feature-sets/service';
import { busAccountDirectory, identityClient, organizationsClient, orgTokensClient } from './ingestion/bus-accounts';
import { InventoryIngestion } from './ingestion/inventory-ingestion';
import { Clusters } from './inventory/clusters';
import { ENROLL_HUB_EFFECT, HubEnrolment } from './inventory/enrolment';
import { Relationships, TUPLES_EFFECT } from './inventory/tuples';
import { CLUSTERS_READS, clustersService } from './service';

/** Its schema and the migrations that make it. */
const DATABASE = { schema: 'clusters', migrations };

/** Starts the clusters service: the cluster inventory (hubs, managed clusters, namespaces, installed features) and its ingestion. */
export const clustersApp = defineApp({ name: 'clusters', env: clustersEnv, database: DATABASE, start: startClusters });

function startClusters(config: ClustersConfig) {
  const relationships = new Relationships(config.AUTHZ_GRPC_ADDR);
  const orgTokens = orgTokensClient(config.ORGS_TEAMS_GRPC_ADDR);
  const organizations = organizationsClient(config.ORGS_TEAMS_GRPC_ADDR);
  const identity = identityClient(config.ORGS_TEAMS_GRPC_ADDR);
  let stopCleanup: (() => Promise<void>) | undefined;
  let stopConsumer: Unsubscribe | undefined;
  let stopPruning: (() => void) | undefined;
  return startService(
    {
      name: 'clusters',
      protoPackage: 'clusters',
      database: DATABASE,
      // Consumes agent inventory reports (a durable consumer); readiness follows the bus connection.
      bus: true,
      grpc: async ({ db, bus, outbox, log }) => {
        // The desired state of a hub's cluster sets goes to its agent after the change commits (the relay retries it).
        const desired = new DesiredStates(db!, bus!);
        // Client-org creations and hub enrolments are operations across orgs-teams and this service: the outbox carries
        // one a crash interrupted to its end or back to nothing.
        const provisioning = new ClientOrgProvisioning(db!, identity, organizations, log);
        const enrolment = new HubEnrolment(db!, orgTokens, log);
        // What the other apps keep of the inventory follows this notice: sent by the inventory where it knows the clusters
        // it changed (a hub recorded or taken back, a report applied), by every write method (clusters-changed.ts), and by
        // the outbox effects and periodic passes below whenever they wrote (a relay finishing an operation, a clean-up).
        const clustersChanged = clustersChangedNotice(bus!, log);
        const announcedIfWritten = announcingBackgroundWrites(db!, () => clustersChanged(ANY_CLUSTER));
        const box = outbox({
          // Tuples are authz's, which announces them itself; a desired state sent writes only its generation, in no answer.
          [TUPLES_EFFECT]: relationships.effect(),
          [DESIRED_STATE_EFFECT]: desired.effect(),
          [PROVISION_CLIENT_ORG_EFFECT]: announcedIfWritten.effect(provisioning.effect()),
          [ENROLL_HUB_EFFECT]: announcedIfWritten.effect(enrolment.effect()),
        });
        const clientOrgs = new ClientOrgs(db!, box, organizations);
        provisioning.use(box, clientOrgs);
        const clusters = new Clusters(db!, box, clustersChanged);
        enrolment.use(box, clusters);
        const ingestion = new InventoryIngestion(box, busAccountDirectory(orgTokens, db!), db!, log, clustersChanged);
        stopConsumer = await ingestion.consume(bus!);
        stopPruning = ingestion.pruneSeenPeriodically();
        // Client-org removals and deletions run here, asynchronously, a pass every CLIENT_ORG_CLEANUP_INTERVAL_MS.
        const stopClientOrgs = periodicPass(
          announcedIfWritten.pass(() => clientOrgs.cleanup(log)),
          config.CLIENT_ORG_CLEANUP_INTERVAL_MS,
          (err) => log.warn({ err: (err as Error).message }, 'client-org cleanup pass failed'),
        );
        // Team auto-connect: connections of users who left an owner team some other way than the teams routes.
        const stopReconcile = periodicPass(
          // Its delete runs every pass: what it took back, not that it ran, is the change.
          async () => {
            if ((await clusters.reconcileConnections(organizations, log)) > 0) await clustersChanged(ANY_CLUSTER);
          },
          config.CONNECTION_RECONCILE_INTERVAL_MS,
          (err) => log.warn({ err: (err as Error).message }, 'cluster connection reconcile pass failed'),
        );
        stopCleanup = async () => {
          await stopClientOrgs();
          await stopReconcile();
        };
        return [
          announcingWrites(clustersService(clusters, enrolment), CLUSTERS_READS, announcingChanges(clustersChanged, clustersServiceChange)),
          announcingWrites(clusterSetsService(new ClusterSets(db!, box)), CLUSTER_SETS_READS, announcingChanges(clustersChanged)),
          announcingWrites(featureSetsService(new FeatureSets(db!, box)), FEATURE_SETS_READS, announcingChanges(clustersChanged)),
          announcingWrites(clientOrgsService(clientOrgs, provisioning), CLIENT_ORGS_READS, announcingChanges(clustersChanged)),
        ];
      },
      onStop: async () => {
        stopPruning?.();
        await stopCleanup?.();
        organizations.close();
        identity.close();
        await stopConsumer?.();
        orgTokens.close();
        await relationships.close();
      },
    },
    config,
  );
}

/**
 * Runs `pass` every `ms`, one pass at a time (a slow pass is not overlapped by the next); the returned stop waits
 * for the pass running, so none outlives the database at shutdown.
 */
function periodicPass(pass: () => Promise<void>, ms: number, onError: (err: unknown) => void): () => Promise<void> {
  let running: Promise<void> | undefined;
  const timer = setInterval(() => {
    running ??= pass()
      .catch(onError)
      .finally(() => (running = undefined));
  }, ms);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await running;
  };
}
