import type { Database, EffectContext, EffectHandler, EffectInStatement, StageEffect, StatementColumn } from '@platform/db';
import { clustersV1 } from '@platform/proto';
import { createClient, type CallOptions } from '@platform/service-kit';
import { MembersStore } from './members-store';
import { TeamsStore } from './teams-store';

/**
 * Team auto-connect (docs/organizations-and-teams.md): joining or leaving an organization's owner team may also
 * connect the user to the organization's clusters or disconnect them. The clusters service records it
 * (`SetUserConnection`); orgs-teams asks for it as an outbox effect of the membership change, so the two happen
 * together: a refusal undoes the membership, and a crash in between is finished by the relay.
 */

/** What orgs-teams asks of the clusters service. */
export interface ClusterConnections {
  setUserConnection(req: clustersV1.SetUserConnectionRequest, call?: CallOptions): Promise<unknown>;
}

/** The clusters service at `address`; SetUserConnection is idempotent, so it is retried while the service is unreachable. */
export function clusterConnectionsClient(address: string): ClusterConnections & { close(): void } {
  return createClient(clustersV1.ClustersServiceService, address, {
    name: 'clusters',
    deadlineMs: 5_000,
    idempotent: ['setUserConnection'],
  });
}

export const CLUSTER_CONNECTION_EFFECT = 'clusters.user-connection';

/** A user's connection to an organization's clusters, set with a change of their owner-team membership. */
export interface ClusterConnectionChange {
  orgId: number;
  userId: number;
  login: string;
  role: string;
  /**
   * true connects, false disconnects; undefined or null changes nothing (the undo of a change that had nothing to take
   * back).
   */
  connect?: boolean | null;
  /**
   * What undoing the change sets: false (disconnect) when the change made the user an owner, else undefined or null
   * (as a statement makes it: `on_undo`, MembersStore.joinTeamAndOrg) — a removal put back, or a member already in the
   * team, keeps whatever connection the clusters service has.
   */
  onUndo?: boolean | null;
}

/** Stages setting the user's connection; applied after the membership commits, in order after its tuples. */
export function stageClusterConnection(stage: StageEffect, change: ClusterConnectionChange): void {
  stage(CLUSTER_CONNECTION_EFFECT, change);
}

/** The same effect, for a change written by one statement: what its undo sets is a column of that statement. */
export function clusterConnectionInStatement(change: Omit<ClusterConnectionChange, 'onUndo'>, onUndo: StatementColumn): EffectInStatement {
  return { kind: CLUSTER_CONNECTION_EFFECT, payload: { ...change, onUndo } };
}

/**
 * The effect's handler. It reconciles a connection with the rows rather than replaying it: a connection applied
 * late (by the relay) for a user who is no longer in the owner team disconnects them instead.
 */
export function clusterConnectionEffect(db: Database, clusters: ClusterConnections): EffectHandler<ClusterConnectionChange> {
  const teams = TeamsStore.create(db);
  const members = MembersStore.create(db);
  const isOwner = async (orgId: number, userId: number) => {
    const ownerTeamId = await teams.ownerTeamId(orgId);
    return ownerTeamId !== undefined && (await members.teamIdsOf(orgId, userId)).includes(ownerTeamId);
  };
  return {
    async apply(c: ClusterConnectionChange, call: EffectContext) {
      if (c.connect === undefined || c.connect === null) return;
      const connect = c.connect && (await isOwner(c.orgId, c.userId));
      await clusters.setUserConnection(
        { ownerType: 'organization', ownerId: c.orgId, userId: c.userId, login: c.login, role: c.role, connect },
        call,
      );
    },
    invert: (c) => ({ ...c, connect: c.onUndo, onUndo: undefined }),
  };
}
