import { NoticeCache, ORGS_CHANGED, TUPLES_CHANGED, type Bus, type OrgsChanged } from '@platform/bus';
import type { orgsTeamsOrgsV1 } from '@platform/proto';

/** One answered page of an organization's teams, with the custom roles of each. */
export type TeamListPage = orgsTeamsOrgsV1.ListTeamsResponse;

/**
 * The pages of teams lists already answered, by organization and by the page asked for (and the search text). The
 * teams list is among the most asked reads, and each answer costs a statement here and one in authz (the teams'
 * custom roles). A NoticeCache (libs/bus): a change of a team or of its organization evicts the organization's pages
 * here once it has committed, and the other replicas hear it through the organizations' notice; the custom roles
 * live in authz, so any tuple change there (a role given to or taken from a team, a role deleted) empties every page.
 */
export class TeamListCache {
  private readonly pages: NoticeCache<TeamListPage>;

  constructor(ttlMs: number, capacity = 10_000) {
    this.pages = new NoticeCache({ name: 'orgs-teams.team-lists', ttlMs, maxEntries: capacity, keepWithoutBus: true });
  }

  /** The page, kept or read by `load`. */
  through(orgId: number, query: string, load: () => Promise<TeamListPage>, since?: number): Promise<TeamListPage> {
    return this.pages.through(`${orgId}|${query}`, load, { tags: [`org:${orgId}`] }, since);
  }

  /** Forgets an organization's pages (a team or the organization changed), and what reads in flight read. */
  evict(orgId: number): void {
    this.pages.evict([`org:${orgId}`]);
  }

  /** Follows the other replicas' organization notices and authz's tuple notices (see NoticeCache.follow). */
  follow(bus: Bus): Promise<() => Promise<void>> {
    return this.pages.follow(bus, [
      { subject: ORGS_CHANGED, stale: (p) => ((p as OrgsChanged).orgIds ?? []).map((id) => `org:${id}`) },
      { subject: TUPLES_CHANGED, stale: () => 'all' },
    ]);
  }
}
