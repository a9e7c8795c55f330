import { AsyncLocalStorage } from 'node:async_hooks';
import type { Knex } from 'knex';
import {
  ACCOUNTS_CHANGED,
  ORGS_CHANGED,
  ORGS_TEAMS_OTHER_CHANGED,
  SIGNIN_CHANGED,
  TUPLES_CHANGED,
  tupleTags,
  type AccountsChanged,
  type Bus,
  type OrgsChanged,
  type OrgsTeamsOtherChanged,
  type SignInChanged,
  type TuplesChanged,
} from '@platform/bus';
import { statementWrites, type Database, type EffectHandler } from '@platform/db';
import type { orgsTeamsOrgsV1 } from '@platform/proto';
import { announcingWrites, type Logger, type ServiceBinding } from '@platform/service-kit';
import type { Tuple } from './relationships';

/*
 * How every write of orgs-teams announces itself (docs/decisions.md, D83). A write method's call (announcedWrites), a
 * background pass or an outbox effect applied later (announcingChanges) runs with a collector of its own: the data
 * layer records in it, at the statements that write them, the accounts and organizations it changed (`changed`), and
 * every statement the call runs on this schema is noted with its table. After the call its readers are told: the
 * accounts and organizations recorded, or everything when a statement wrote a table readers keep answers of without
 * the kind of record that table calls for. Forgetting to record costs the readers' cache hits, never a stale answer.
 * A read method runs with a collector too: the incidental writes of a read (a token's or a session's last use, a code
 * spent at sign-in, the answer of a sync token's secret, shown once) and the failures that lock a sign-in out are
 * announced as any write is, so its readers may keep what shows them.
 */

/**
 * What a record names: accounts (users, service accounts, organizations as accounts), organizations, or accounts whose
 * sign-in state alone changed (a last use, a last sign-in, a lockout: what who-a-token-belongs-to does not show).
 */
type Kind = 'accounts' | 'orgs' | 'signin';

/** A table readers keep answers of whole: a write of it needs no record, it is announced as ORGS_TEAMS_OTHER_CHANGED. */
const WHOLE = 'whole' as const;
/** A table of sign-in state readers keep whole: a write of it needs no record, it is announced as SIGNIN_CHANGED. */
const SIGNIN = 'signin' as const;

/**
 * Every table of the identity schema, with the records that cover a write of it: a change of its rows changes
 * answers readers keep (libs/orgs-teams-client) unless the list is empty. A table missing here is taken as kept and
 * covered by no record, so writing it announces everything (a test lists the schema's tables against this).
 */
export const READERS_KEEP: Readonly<Record<string, readonly Kind[] | typeof WHOLE | typeof SIGNIN>> = {
  // Users, service accounts and organizations share one table: who a token belongs to, accounts, organization views;
  // an account's last sign-in alone is sign-in state.
  accounts: ['accounts', 'orgs', 'signin'],
  // Who a token belongs to, and with what scopes; its last use alone is sign-in state (the token lists show it).
  access_tokens: ['accounts', 'signin'],
  // A Kubernetes ServiceAccount token authenticates as the service account its subject names.
  service_account_subjects: ['accounts'],
  service_account_roles: ['accounts'],
  org_system_admins: ['accounts'],
  // An organization's teams, and who is a member (a private organization is seen by its members).
  teams: ['orgs'],
  org_users: ['orgs'],
  team_users: ['orgs'],
  // Kept by readers whole (ORGS_TEAMS_READS in libs/orgs-teams-client), each write announced as the other notice.
  external_identities: WHOLE,
  group_mappings: WHOLE,
  site_settings: WHOLE,
  allowed_domains: WHOLE,
  org_avatars: WHOLE,
  org_claims: WHOLE,
  manager_sync_tokens: WHOLE,
  bus_accounts: WHOLE,
  // Sign-in state, kept by readers whole (sessions, second factors), each write announced as the sign-in notice.
  sessions: SIGNIN,
  two_factor: SIGNIN,
  recovery_codes: SIGNIN,
  // Kept by no reader: a verification or password-reset link is answered once; the outbox; the audit trail, written
  // with every change made through the API and listed by site admins alone (kept, each event would drop every reader's
  // other answers).
  email_verifications: [],
  password_resets: [],
  audit_events: [],
  outbox: [],
  knex_migrations: [],
  knex_migrations_lock: [],
};

/** What a change's notices name: its accounts and organizations, and whether the other and sign-in notices go. */
interface Announcement {
  userIds: number[];
  orgIds: number[];
  /** The rows of organizations the change left as they are (OrgsChanged.rows). */
  rows?: orgsTeamsOrgsV1.Organization[];
  /** What alone changed of the organizations (OrgsChanged.only), told by the tables written. */
  only?: 'teams' | 'members';
  other: boolean;
  /** The accounts whose sign-in state changed (empty: unrecorded), when it did. */
  signin?: number[];
}

/** An organization's teams and who is in them: the tables whose writes alone leave its row as it was (OrgsChanged.only). */
const TEAM_TABLES: readonly string[] = ['teams', 'org_users', 'team_users'];

/** A write whose table could not be told: covered by no record. */
const UNKNOWN_TABLE = '?';

/** What one call or pass of orgs-teams changed, as its data layer recorded it and as its statements wrote. */
export class Changes {
  readonly accounts = new Set<number>();
  readonly orgs = new Set<number>();
  readonly signin = new Set<number>();
  /**
   * Organizations whose row the change left as recorded here (an edit's answer, with its new version): the notice carries
   * them when nothing else was written of them (`rowsAlone`), so readers replace what they keep instead of dropping it.
   */
  readonly orgRows = new Map<number, orgsTeamsOrgsV1.Organization>();
  /** The tables of this schema its statements wrote. */
  readonly written = new Set<string>();
  /**
   * Tuples this change wrote in authz's table itself (D134), as authz's notice would name them: their tags and their
   * organizations. The change's notice of them (TUPLES_CHANGED) is sent as authz sends its own.
   */
  readonly tuples = { tags: new Set<string>(), orgs: new Set<number>() };
  /** Announced: work that goes on in its context afterwards (an effect applied detached) needs a collector of its own. */
  announced = false;

  constructor(private readonly schema: string) {}

  /** Notes a statement run for this change (the collector's knex listener). */
  statement(sql: string): void {
    for (const { schema, table } of statementWrites(sql)) {
      // Another service's schema (apps sharing the embedded database, calls in the same process): its owner announces it.
      if (schema === undefined || table === undefined) this.written.add(UNKNOWN_TABLE);
      else if (schema === this.schema) this.written.add(table);
    }
  }

  /**
   * What readers are told: the accounts and organizations recorded, 'everything' when a table readers keep answers of
   * was written without a record of the kind it calls for, nothing when no kept answer changed (nothing written, or
   * only tables no reader keeps).
   */
  announcement(): Announcement | 'everything' | undefined {
    let other = false;
    let signin = this.signin.size > 0;
    for (const table of this.written) {
      const kinds = READERS_KEEP[table];
      if (kinds === WHOLE) other = true;
      else if (kinds === SIGNIN) signin = true;
      else if (!kinds || (kinds.length > 0 && !kinds.some((kind) => this[kind].size > 0))) return 'everything';
    }
    if (this.accounts.size === 0 && this.orgs.size === 0 && !other && !signin) return undefined;
    const only = this.orgs.size > 0 ? this.orgsOnly() : undefined;
    const rows = this.rowsAlone() ? [...this.orgRows.values()] : [];
    return {
      userIds: [...this.accounts],
      orgIds: [...this.orgs],
      ...(only ? { only } : {}),
      ...(rows.length ? { rows } : {}),
      other,
      signin: signin ? [...this.signin] : undefined,
    };
  }

  /**
   * Whether the rows recorded are all that changed of the organizations: the account table (an organization's row) is
   * the only one written that readers keep. Anything else (who is in an organization, its teams, a table that could
   * not be told) may change what readers keep beside the row, which only dropping it covers.
   */
  private rowsAlone(): boolean {
    if (this.orgRows.size === 0) return false;
    for (const table of this.written) {
      const kinds = READERS_KEEP[table];
      if (table !== 'accounts' && !(Array.isArray(kinds) && kinds.length === 0)) return false;
    }
    return true;
  }

  /**
   * What alone changed of the organizations recorded, by the tables written: their teams, or who is in them, when
   * every other table written is one no reader keeps (the outbox, the audit trail). Undefined when anything else was
   * written (an account row, which an organization's row is, a table kept whole, one that could not be told): their
   * rows may have changed too.
   */
  private orgsOnly(): 'teams' | 'members' | undefined {
    for (const table of this.written) {
      const kinds = READERS_KEEP[table];
      if (!TEAM_TABLES.includes(table) && !(Array.isArray(kinds) && kinds.length === 0)) return undefined;
    }
    if (this.written.has('teams')) return 'teams';
    return this.written.has('org_users') || this.written.has('team_users') ? 'members' : undefined;
  }
}

const collector = new AsyncLocalStorage<Changes>();

const record = (kind: Kind, ids: Iterable<number | string | null | undefined>) => {
  const changes = collector.getStore();
  if (!changes) return;
  for (const id of ids) {
    if (!id) continue;
    changes[kind].add(Number(id));
    // A change recorded after a row was: the row recorded may no longer be the organization's.
    if (kind === 'orgs') changes.orgRows.delete(Number(id));
  }
};

/**
 * Records, at a statement that writes them, the accounts and organizations a change touched, for the notice its call
 * sends (outside a call or pass, as in a read's incidental write, nothing is recorded).
 */
export const changed = {
  /** These accounts' rows, tokens or credentials (users, service accounts; an organization's row is also `orgs`). */
  accounts: (ids: Iterable<number | string | null | undefined>): void => record('accounts', ids),
  /** These organizations' rows, members or teams. */
  orgs: (ids: Iterable<number | string | null | undefined>): void => record('orgs', ids),
  /** An organization's row as the statement that changed it (recorded with `orgs` before it) answered it. */
  orgRow: (row: orgsTeamsOrgsV1.Organization): void => {
    const changes = collector.getStore();
    if (changes?.orgs.has(row.id)) changes.orgRows.set(row.id, row);
  },
  /** These accounts' sign-in state alone: a last use or last sign-in written, a failure counted toward a lockout. */
  signin: (ids: Iterable<number | string | null | undefined>): void => record('signin', ids),
  /** Tuples written in authz's table by this change's own statement, and the organizations their objects belong to. */
  tuples: (tuples: readonly Tuple[], orgIds: readonly number[]): void => {
    const changes = collector.getStore();
    if (!changes) return;
    for (const t of tuples) for (const tag of tupleTags(t)) changes.tuples.tags.add(tag);
    for (const id of orgIds) changes.tuples.orgs.add(id);
  },
};

const watched = new WeakSet<Knex>();

/** Notes every statement run on `db`'s knex for the change whose call runs it (once per knex; apps may share one). */
export function watchStatements(db: Database): void {
  if (watched.has(db.knex)) return;
  watched.add(db.knex);
  db.knex.on('query', (query: { sql?: string }) => {
    if (typeof query?.sql === 'string') collector.getStore()?.statement(query.sql);
  });
}

/**
 * The other side of `OrgCache`: the replica that made a change forgets it at once, before it answers, or, for an edit
 * whose row the notice brings, keeps that row when it is newer.
 */
export interface LocalOrgRows {
  evict(orgId: number): void;
  edited(rows: orgsTeamsOrgsV1.Organization[]): void;
  clear(): void;
}

/**
 * Tells orgs-teams' readers what a change changed (ACCOUNTS_CHANGED, ORGS_CHANGED; both with `all` for everything),
 * awaited so the bus has the notices before the caller hears back. Best effort: a notice that cannot be sent is logged,
 * and a reader that misses it keeps the old answer no longer than its lifetime (AUTH_CACHE_TTL_MS, ORG_CACHE_TTL_MS).
 */
export class ChangeAnnouncer {
  constructor(
    private readonly schema: string,
    private readonly bus: Bus | undefined,
    private readonly log: Pick<Logger, 'warn'>,
    private readonly orgRows?: LocalOrgRows,
  ) {}

  /** A collector for one change. */
  changes(): Changes {
    return new Changes(this.schema);
  }

  /** Logs a read that wrote tables readers keep without a record of what it changed (announced as everything). */
  unrecorded(read: string, changes: Changes): void {
    this.log.warn({ method: read, tables: [...changes.written] }, 'a read of orgs-teams wrote without recording what it changed');
  }

  async announce(changes: Changes | undefined): Promise<void> {
    if (changes) changes.announced = true;
    // Tuples the change wrote itself: named as authz names those it writes (tuples-changed.ts), whatever else is told.
    const tuples = changes?.tuples.tags.size
      ? this.notify(TUPLES_CHANGED, {
          tags: [...changes.tuples.tags],
          relations: true,
          orgs: [...changes.tuples.orgs],
        } satisfies TuplesChanged)
      : undefined;
    const what = changes ? changes.announcement() : 'everything';
    if (what === undefined) return tuples;
    const accounts: AccountsChanged = what === 'everything' ? { userIds: [], all: true } : { userIds: what.userIds };
    const orgs: OrgsChanged =
      what === 'everything'
        ? { orgIds: [], all: true }
        : { orgIds: what.orgIds, ...(what.only ? { only: what.only } : {}), ...(what.rows ? { rows: what.rows } : {}) };
    if (what === 'everything') this.orgRows?.clear();
    else if (!orgs.only) {
      // This replica's rows: an edited one kept as the edit left it, any other forgotten.
      const rows = what.rows ?? [];
      if (rows.length) this.orgRows?.edited(rows);
      for (const id of orgs.orgIds) if (!rows.some((r) => r.id === id)) this.orgRows?.evict(id);
    }
    const sends: Promise<void>[] = [];
    if (accounts.all || accounts.userIds.length) sends.push(this.notify(ACCOUNTS_CHANGED, accounts));
    if (orgs.all || orgs.orgIds.length) sends.push(this.notify(ORGS_CHANGED, orgs));
    if (what === 'everything' || what.other) sends.push(this.notify(ORGS_TEAMS_OTHER_CHANGED, {}));
    if (what === 'everything' || what.signin)
      sends.push(this.notify(SIGNIN_CHANGED, { userIds: what === 'everything' ? [] : what.signin! }));
    if (tuples) sends.push(tuples);
    await Promise.all(sends);
  }

  private async notify(
    subject: string,
    payload: AccountsChanged | OrgsChanged | OrgsTeamsOtherChanged | SignInChanged | TuplesChanged,
  ): Promise<void> {
    await this.bus?.notify(subject, payload).catch((err) => this.log.warn({ err, subject }, "could not send orgs-teams' change notice"));
  }
}

/**
 * The binding with every method not in `reads` announced (announcingWrites): each call runs with a collector of its
 * own, opened around announcingWrites' wrapper so it still holds what the call recorded when the announcement is made.
 * A read runs with a collector as well, and announces only what it wrote or recorded (usually nothing), answered or not
 * (a failed sign-in counts toward a lockout).
 */
export function announcedWrites<D>(binding: ServiceBinding<D>, reads: readonly (keyof D)[], announcer: ChangeAnnouncer): ServiceBinding<D> {
  const announcing = announcingWrites(binding, reads, () => announcer.announce(collector.getStore()));
  const handlers = { ...announcing.handlers };
  for (const name of Object.keys(handlers) as (keyof D)[]) {
    const handle = announcing.handlers[name] as (request: unknown, ctx: unknown) => Promise<unknown>;
    handlers[name] = (
      reads.includes(name)
        ? (request: unknown, ctx: unknown) => announcingChanges(announcer, () => handle(request, ctx), String(name))
        : (request: unknown, ctx: unknown) => collector.run(announcer.changes(), () => handle(request, ctx))
    ) as never;
  }
  return { ...announcing, handlers };
}

/**
 * Runs a write no gRPC call carries (a periodic pass, an outbox effect the relay applies, the start-up bootstrap) with a
 * collector, and announces what it changed as a call would. Inside a call already (an effect applied right after its
 * commit), it records into the call's collector and the call announces.
 */
export async function announcingChanges<T>(announcer: ChangeAnnouncer, work: () => Promise<T>, read?: string): Promise<T> {
  const open = collector.getStore();
  if (open && !open.announced) return work();
  const changes = announcer.changes();
  return collector.run(changes, async () => {
    try {
      return await work();
    } finally {
      // A read that wrote what readers keep without recording it costs every reader its cache: worth a line.
      if (read && changes.announcement() === 'everything') announcer.unrecorded(read, changes);
      await announcer.announce(changes);
    }
  });
}

/** The outbox's effect handlers, each applied under announcingChanges: by the relay, it announces what it changed. */
export function announcedEffects(announcer: ChangeAnnouncer, handlers: Record<string, EffectHandler>): Record<string, EffectHandler> {
  return Object.fromEntries(
    Object.entries(handlers).map(([kind, handler]) => [
      kind,
      {
        ...handler,
        apply: (payload: unknown, call, applied) => announcingChanges(announcer, () => handler.apply(payload, call, applied)),
      } satisfies EffectHandler,
    ]),
  );
}
