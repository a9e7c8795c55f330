import { createHash } from 'node:crypto';
import type { Metadata } from '@grpc/grpc-js';
import { accountsNamed, ACCOUNTS_CHANGED, NoticeCache, type Bus } from '@platform/bus';
import { NotAllowedError, NotAuthenticatedError, UnavailableError } from '@platform/errors';
import { authzV1, orgsTeamsV1, type AccessQuestion, type AskAccount, type CallingAccount, type MethodPolicy } from '@platform/proto';
import { appCredential, isAppToken, jwtPart } from './app-credential';
import type { CallContext, Caller } from './call-context';
import { createClient } from './grpc-client';

/** The longest bearer token looked at; longer ones are refused without asking anyone. */
const MAX_TOKEN_LENGTH = 8192;

/**
 * How a server learns who a service account is and what it holds. The default asks orgs-teams and authz over
 * gRPC (as a platform app); authz answers the questions from its own engine.
 */
export interface CallerAccess {
  /** The active service account a token belongs to (its own token, or a Kubernetes token bound to it); undefined for none. */
  authenticate(token: string, ctx: CallContext): Promise<(CallingAccount & { login: string }) | undefined>;
  /** Which of the relations asked the account holds, in the order asked. */
  holdsEach(account: CallingAccount, questions: AccessQuestion[], ctx: CallContext): Promise<boolean[]>;
}

/** The bearer token of a call's metadata, undefined when it carries none. */
function bearerToken(metadata: Metadata): string | undefined {
  const value = metadata.get('authorization')[0];
  if (value === undefined) return undefined;
  const m = /^bearer\s+(\S+)$/i.exec(String(value));
  if (!m) throw new NotAuthenticatedError('the authorization metadata must be "Bearer <token>"');
  return m[1];
}

/** Who sent a call that came over the network: an app by its signed token, else a service account; never anonymous. */
export async function callerOf(metadata: Metadata, access: CallerAccess | undefined, ctx: CallContext): Promise<Caller> {
  const token = bearerToken(metadata);
  if (!token) throw new NotAuthenticatedError('credentials are required: send the metadata "authorization: Bearer <token>"');
  if (token.length > MAX_TOKEN_LENGTH) throw new NotAuthenticatedError('invalid token');
  // Verified first: an app's token is verified once and then found in the credential's memory, where asking whether
  // it claims to be an app's (decoding it) on every call was a measurable share of a busy app's time.
  const app = appCredential().verify(token);
  if (app) return { kind: 'app', app };
  if (isAppToken(token)) throw new NotAuthenticatedError('invalid or expired platform credential');
  if (!access) throw new UnavailableError('service-account credentials cannot be checked here');
  const account = await access.authenticate(token, ctx);
  if (!account) throw new NotAuthenticatedError('invalid, revoked or expired token');
  return { kind: 'account', account };
}

/** A call once admitted: the request as it is served, and its answer as the caller may see it. */
export interface Admitted {
  request: unknown;
  answer: (response: unknown) => unknown | Promise<unknown>;
}

const asServed = (response: unknown) => response;

/**
 * Admits a call under its method's policy, answering the request as it is then served and how its answer is shown:
 * platform apps call everything and see every answer whole; a service account calls public methods only, holding
 * what the method asks, and sees the answer as the policy shows it to the account (which may ask, of the answer,
 * what the account holds: a list cut to the objects it sees).
 */
export async function admit(
  policy: MethodPolicy,
  caller: Caller,
  request: unknown,
  access: CallerAccess | undefined,
  ctx: CallContext,
): Promise<Admitted> {
  if (caller.kind === 'app') return { request, answer: asServed };
  if (policy.access === 'internal') throw new NotAllowedError('this method is internal to the platform: only its own apps may call it');
  if (policy.access === 'any-caller') return { request, answer: asServed };
  const { questions, request: asked, refused, answer } = policy.authorize(request, caller.account);
  if (refused) throw new NotAllowedError(refused);
  const ask: AskAccount = async (q) => (q.length > 0 ? access!.holdsEach(caller.account, q, ctx) : []);
  if (questions.length > 0 && !(await ask(questions)).every(Boolean))
    throw new NotAllowedError(`the service account lacks ${questions.map((q) => `${q.relation} on ${q.object}`).join(', ')}`);
  return { request: asked ?? request, answer: answer ? (response) => answer(response, ask) : asServed };
}

type Account = CallingAccount & { login: string };

/**
 * Who a service-account token belongs to, kept so that a call costs no call to orgs-teams: a NoticeCache (libs/bus)
 * keyed by the token's SHA-256, never the token. An account's entries go at once on orgs-teams' notice that it
 * changed (a token deleted, the account disabled, deleted, or its admin flag changed); a fence makes sure every
 * notice sent before the call has been heard before a kept entry is used, and while the bus is disconnected nothing
 * is kept, so a revoked token is refused by the very next call to any replica. A JWT is never kept past its expiry.
 */
export class CredentialCache {
  private readonly accounts: NoticeCache<Account | undefined>;

  constructor(ttlMs: number, maxEntries = 10_000, name = 'credentials') {
    this.accounts = new NoticeCache({ name, ttlMs, maxEntries });
  }

  /** Evicts on orgs-teams' account notices and follows the bus connection; answers how to stop. */
  follow(bus: Bus): Promise<() => Promise<void>> {
    return this.accounts.follow(bus, [
      // The named accounts, or every one for the notice meaning everything (a write that did not record which).
      { subject: ACCOUNTS_CHANGED, stale: accountsNamed },
    ]);
  }

  /** The account a token belongs to: kept, or asked with `ask` (and kept when it names one). */
  answer(token: string, ask: () => Promise<Account | undefined>): Promise<Account | undefined> {
    return this.accounts.through(createHash('sha256').update(token).digest('hex'), ask, {
      keep: (account) => account !== undefined,
      tags: (account) => [`account:${account!.id}`],
      ttlMs: () => expiresInMs(token),
    });
  }

  evict(accountIds: number[]): void {
    this.accounts.evict(accountIds.map((id) => `account:${id}`));
  }

  clear(): void {
    this.accounts.clear();
  }

  get size(): number {
    return this.accounts.size;
  }
}

/** How long a JWT (a Kubernetes token) stays valid: never kept past its own expiry; undefined for other tokens. */
function expiresInMs(token: string): number | undefined {
  const exp = jwtPart(token, 1)?.exp;
  return typeof exp === 'number' ? Math.max(0, exp * 1_000 - Date.now()) : undefined;
}

/** What the default CallerAccess needs: where orgs-teams and authz listen, and the cache. */
export interface GrpcCallerAccessOptions {
  orgsTeamsAddress: string;
  authzAddress: string;
  cache?: CredentialCache;
  /** Answers the questions without a call (authz itself). */
  holdsEach?: CallerAccess['holdsEach'];
}

/** Service accounts authenticated by orgs-teams and their questions answered by authz, both over gRPC. */
export function grpcCallerAccess(opts: GrpcCallerAccessOptions): CallerAccess & { close(): void } {
  const identity = createClient(orgsTeamsV1.OrgsTeamsServiceService, opts.orgsTeamsAddress, { name: 'orgs-teams', deadlineMs: 5_000 });
  const authz = opts.holdsEach
    ? undefined
    : createClient(authzV1.AuthzServiceService, opts.authzAddress, { name: 'authz', deadlineMs: 5_000 });
  const ask = async (token: string, ctx: CallContext): Promise<Account | undefined> => {
    const { user } = await identity.authenticate({ token }, ctx);
    // Only service accounts call over gRPC: a person's personal token is for the REST API.
    if (!user || !user.serviceAccount || !user.active || user.prohibitLogin) return undefined;
    return { id: user.id, login: user.login, isAdmin: user.isAdmin };
  };
  return {
    authenticate: (token, ctx) => (opts.cache ? opts.cache.answer(token, () => ask(token, ctx)) : ask(token, ctx)),
    holdsEach:
      opts.holdsEach ??
      (async (account, questions, ctx) => {
        const { allowed } = await authz!.batchCheck(
          {
            checks: questions.map((q) => ({
              tuple: { user: `user:${account.id}`, relation: q.relation, object: q.object },
              contextualTuples: [],
            })),
          },
          ctx,
        );
        // An answer of another length is no answer: nothing is held.
        return questions.map((_, i) => allowed.length === questions.length && allowed[i] === true);
      }),
    close() {
      identity.close();
      authz?.close();
    },
  };
}
