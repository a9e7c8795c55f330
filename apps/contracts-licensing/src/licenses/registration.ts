import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { EffectContext, EffectHandler, Outbox } from '@platform/db';
import { ConflictError, NotFoundError, UnavailableError } from '@platform/errors';
import { orgsTeamsV1, type licensingV1 } from '@platform/proto';
import { createClient, type CallOptions, type PromiseClient } from '@platform/service-kit';
import type { Licenses } from './licenses';

/** The outbox effect that makes a license holder's account and records the registration with it. */
export const REGISTER_LICENSE_EFFECT = 'license.register';

/** What registration asks of orgs-teams: accounts by login, and a new one for a holder that has none. */
export type HolderAccounts = Pick<PromiseClient<typeof orgsTeamsV1.OrgsTeamsServiceService>, 'getUser' | 'createUser'>;

/** orgs-teams' accounts, for license holders. */
export function holderAccountsClient(address: string): PromiseClient<typeof orgsTeamsV1.OrgsTeamsServiceService> {
  return createClient(orgsTeamsV1.OrgsTeamsServiceService, address, { name: 'orgs-teams', deadlineMs: 5_000 });
}

/** A registration whose holder gets an account, as its outbox entry carries it (never a secret). */
interface RegisterEffect {
  /** The request waiting for it in this process, if any. */
  op: string;
  serial: string;
  clusterUid: string;
  email: string;
  /** The login the account is made under. */
  login: string;
}

/** The holder's user account. */
interface Holder {
  id: number;
  login: string;
}

/** What the lookup found: the holder's account, or the login to make one under, or neither (recorded by email alone). */
interface Found {
  holder?: Holder;
  create?: string;
}

/** What the request that staged a registration waits for. */
interface Outcome {
  result?: licensingV1.Registration;
  error?: unknown;
}

const LOGIN_MAX = 40;

/**
 * The logins a holder's account may have, in order: the email's local part made a login, then the same with a
 * digest of the whole email, so two holders with one local part at different domains get two accounts.
 */
export function holderLogins(email: string): string[] {
  const local = email.split('@')[0].toLowerCase().replace(/[^a-z0-9._-]+/g, '-');
  const trim = (s: string) => s.replace(/^[._-]+|[._-]+$/g, '');
  const base = trim(local.slice(0, LOGIN_MAX)) || 'license-holder';
  const digest = createHash('sha256').update(email.toLowerCase()).digest('hex').slice(0, 8);
  return [base, `${trim(base.slice(0, LOGIN_MAX - 9)) || 'holder'}-${digest}`];
}

const ignoreNotFound = (err: unknown) => {
  if (!(err instanceof NotFoundError)) throw err;
  return undefined;
};

/**
 * License registration as one operation (`POST /register`, docs/licensing.md): the license verified, its holder's
 * account found in orgs-teams or, on a self-hosted platform, made there, and the registration recorded with it.
 *
 * Only making an account writes outside this service, and the account is made before the registration is recorded
 * with it. So that a crash between the two never leaves an account no registration names, a registration that makes
 * one is an outbox entry committed before the account is made: the request applies it at once and answers its
 * outcome; after a crash (or a failure that may pass) the relay applies it again until it sticks. Applying it again
 * makes nothing twice: the account made before is the one the login and the email find (CreateUser refuses the
 * login as taken, and GetUser answers it with the holder's email), and recording again only refreshes the row. The
 * one step that can be refused for good, making the account, comes first, so a refusal leaves nothing behind; the
 * recording after it cannot be refused (the license was checked inside the entry's transaction, and issued
 * licenses are never deleted).
 */
export class LicenseRegistration {
  /** Outcomes awaited by requests of this process, by operation. */
  private readonly waiting = new Map<string, Outcome>();
  private outbox!: Outbox;

  constructor(
    private readonly licenses: Licenses,
    private readonly accounts: HolderAccounts,
    /** Whether a holder without an account gets one: self-hosted platforms; a hosted one issued the license and knows its accounts. */
    private readonly makesAccounts: boolean,
  ) {}

  effect(): EffectHandler<RegisterEffect> {
    return { apply: (e, call) => this.complete(e, call) };
  }

  /** Hands the registration its outbox (opened over `effect()`). */
  use(outbox: Outbox): void {
    this.outbox = outbox;
  }

  /** Verifies the license, finds or makes its holder's account and records the registration; answers it. */
  async register(req: licensingV1.RegisterLicenseRequest, call: EffectContext = {}): Promise<licensingV1.Registration> {
    const verified = await this.licenses.verifyRegistration(req);
    const found = await this.find(verified.email, callOptions(call));
    const record = { serial: verified.serial, clusterUid: verified.clusterUid.toLowerCase(), holderEmail: verified.email };
    const login = found.create;
    if (login === undefined) {
      return this.licenses.recordRegistration({ ...record, holderId: found.holder?.id ?? 0, holderLogin: found.holder?.login ?? '' });
    }
    const op = randomUUID();
    const outcome: Outcome = {};
    this.waiting.set(op, outcome);
    try {
      await this.outbox.run(
        async (trx, stage) => {
          // Checked before the account exists: recording it later cannot be refused.
          await this.licenses.issuedFor(record.serial, record.clusterUid, trx);
          stage(REGISTER_LICENSE_EFFECT, { op, serial: record.serial, clusterUid: record.clusterUid, email: record.holderEmail, login } satisfies RegisterEffect);
        },
        { call },
      );
    } finally {
      this.waiting.delete(op);
    }
    if (outcome.result) return outcome.result;
    throw outcome.error ?? new UnavailableError(`the registration of license ${record.serial} did not finish; it is being completed`);
  }

  /**
   * The holder's account by its email: a user whose login is one the email gives and whose email is it. None on a
   * hosted platform, or when the email's logins are other people's; otherwise the login to make it under.
   */
  private async find(email: string, call: CallOptions): Promise<Found> {
    if (!email) return {};
    for (const login of holderLogins(email)) {
      const user = await this.accounts.getUser({ id: 0, login }, call).catch(ignoreNotFound);
      if (!user) return this.makesAccounts ? { create: login } : {};
      if (sameEmail(user, email)) return { holder: { id: user.id, login: user.login } };
    }
    return {};
  }

  /**
   * Makes the holder's account (with a random password nobody is told and must_change_password, so it has no usable
   * password until its holder sets one through a reset) and records the registration with it. An account the login
   * already names is the holder's when its email is the license's (made by an earlier run of this entry, or by a
   * registration of the same holder just now); otherwise the email is another login's and the holder is recorded by
   * email alone.
   */
  private async complete(e: RegisterEffect, call: EffectContext): Promise<void> {
    const outcome = this.waiting.get(e.op);
    try {
      const holder = await this.make(e, callOptions(call));
      const registration = await this.licenses.recordRegistration({
        serial: e.serial,
        clusterUid: e.clusterUid,
        holderEmail: e.email,
        holderId: holder?.id ?? 0,
        holderLogin: holder?.login ?? '',
      });
      if (outcome) outcome.result = registration;
    } catch (err) {
      if (outcome) outcome.error = err;
      throw err;
    }
  }

  private async make(e: RegisterEffect, call: CallOptions): Promise<Holder | undefined> {
    try {
      const made = await this.accounts.createUser(
        {
          username: e.login,
          email: e.email,
          password: randomBytes(32).toString('base64url'),
          fullName: '',
          mustChangePassword: true,
          isAdmin: false,
        },
        call,
      );
      return { id: made.id, login: made.login };
    } catch (err) {
      if (!(err instanceof ConflictError)) throw err;
      const taken = await this.accounts.getUser({ id: 0, login: e.login }, call).catch(ignoreNotFound);
      return taken && sameEmail(taken, e.email) ? { id: taken.id, login: taken.login } : undefined;
    }
  }
}

function sameEmail(user: { email: string }, email: string): boolean {
  return user.email.toLowerCase() === email.toLowerCase();
}

/** The calls of a step: the request's id and deadline, and its cancellation. */
function callOptions(call: EffectContext): CallOptions {
  return { requestId: call.requestId, deadline: call.deadline, signal: call.signal };
}
