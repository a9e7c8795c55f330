import { besidesRowsBrought, NoticeCache, ORGS_CHANGED, orgRowsBrought, orgRowsNamed, type Bus, type Keeping } from '@platform/bus';
import { orgsTeamsOrgsV1 } from '@platform/proto';
import { fromOrganization, type OrgRow } from './rows';

/** Each kept row of these organizations replaced by the given one when that is newer (a row no newer changes nothing). */
const newer = (rows: Iterable<OrgRow>) =>
  new Map([...rows].map((row) => [`org:${row.id}`, (kept: OrgRow | undefined) => (kept && kept.version >= row.version ? kept : row)]));

/** A row is found by its id and by its slug, and goes with its organization's tag. */
const KEEPING: Keeping<OrgRow | undefined> = {
  // Misses are not kept: a new organization is found at once.
  keep: (row) => row !== undefined,
  tags: (row) => [`org:${row!.id}`],
  alsoAt: (row) => [`id:${row!.id}`, `name:${row!.login.toLowerCase()}`],
};

/**
 * Organizations by id and by slug, for the reads nearly every request makes (`GET /orgs/{org}` and every route
 * whose target is an organization resolve it first). On the embedded database that read was the request's only
 * statement, and statements are serialised on its one connection.
 *
 * A NoticeCache (libs/bus): every change of an organization's row evicts it here (OrganizationsStore before it writes,
 * and the change's announcement once the call is over: changes.ts), other replicas hear of it through the organizations
 * notice (`ORGS_CHANGED`), and a fence makes sure a change answered by another replica is seen by the very next read here.
 * The lifetime (`ORG_CACHE_TTL_MS`) only bounds what a notice lost in the bus itself can cost.
 */
export class OrgCache {
  private readonly rows: NoticeCache<OrgRow | undefined>;

  constructor(ttlMs: number, capacity = 10_000) {
    // Each organization is kept under two keys.
    this.rows = new NoticeCache({ name: 'orgs-teams.orgs', ttlMs, maxEntries: capacity * 2, keepWithoutBus: true });
  }

  /** The organization with this id, kept or read by `load`. */
  byId(id: number, load: () => Promise<OrgRow | undefined>): Promise<OrgRow | undefined> {
    return this.rows.through(`id:${id}`, load, KEEPING);
  }

  /** The organization with this slug (case-insensitive), kept or read by `load`. */
  byName(name: string, load: () => Promise<OrgRow | undefined>): Promise<OrgRow | undefined> {
    return this.rows.through(`name:${name.toLowerCase()}`, load, KEEPING);
  }

  /**
   * An organization's row as an edit left it, or as an edit's notice brings it: what is kept of it is replaced when this
   * one is newer (by `version`, which follows the commits), and reads in flight forget what they read. Not kept when
   * nothing is: the next read finds it.
   */
  replaced(rows: Iterable<OrgRow>): void {
    this.rows.refresh(newer(rows));
  }

  /** The rows of organizations a change of this replica edited, as its notice brings them (`replaced`). */
  edited(orgs: orgsTeamsOrgsV1.Organization[]): void {
    this.replaced(orgs.map(fromOrganization));
  }

  /** Forgets an organization (changed or deleted), and makes reads in flight forget what they read. */
  evict(id: number): void {
    this.rows.evict([`org:${id}`]);
  }

  /** Forgets every organization (a change that did not record which it touched). */
  clear(): void {
    this.rows.clear();
  }

  /** Follows the other replicas' organization notices (see NoticeCache.follow). */
  follow(bus: Bus): Promise<() => Promise<void>> {
    // A change of an organization's teams or members alone leaves its row as it was; an edit's notice brings the row.
    return this.rows.follow(bus, [
      {
        subject: ORGS_CHANGED,
        fresh: (n) => newer([...orgRowsBrought(n).values()].map((row) => fromOrganization(orgsTeamsOrgsV1.Organization.fromJSON(row)))),
        stale: (n) => besidesRowsBrought(orgRowsNamed(n), n),
      },
    ]);
  }
}
