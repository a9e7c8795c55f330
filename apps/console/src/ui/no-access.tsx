import { Component, useId, type ReactNode } from 'react';
import { Link, useLocation } from 'react-router';
import { ApiError } from '../api/client';
import { orgTabOf } from './org-tabs';

/**
 * What a caller sees of a screen their role does not let them see: one page for every screen, as Grafana's and
 * Gitea's "no access" pages are, instead of a screen drawn in part around the API's 403. A screen says so in one of
 * two ways, and both end here: its data is refused (`Show` throws the API's 403 to the screen's boundary), or the
 * console knows before asking (an organization's tab the caller's relations do not show, a site admin's screen), and
 * throws a `Refusal` itself.
 */

/** A screen the console knows the caller may not see, before the API is asked; `who` says who may. */
export class Refusal extends Error {
  constructor(
    message: string,
    readonly who: string,
  ) {
    super(message);
    this.name = 'Refusal';
  }
}

/** Whether an error means "not for you": the API's 403, or a `Refusal`. */
export function isRefusal(error: unknown): error is ApiError | Refusal {
  return error instanceof Refusal || (error instanceof ApiError && error.status === 403);
}

/** The organization a console path is of (`/orgs/demo/usage` → `demo`), for the way back. */
function orgOf(pathname: string): string | undefined {
  const m = /^\/orgs\/([^/]+)/.exec(pathname);
  return m ? decodeURIComponent(m[1]) : undefined;
}

/**
 * The "you don't have access to this" page, or, for a `part` of a screen one may see (who holds a role, on the
 * role's page), the same words in a line. `who` says who may see it; `reason` is what the API answered, kept for
 * whoever asks an owner for access.
 */
export function NoAccess({ who, reason, part }: { who?: string; reason?: string; part?: string }) {
  const id = useId();
  const { pathname } = useLocation();
  const org = orgOf(pathname);
  // An organization's tab says who it is for, whether the API or the tab refused.
  const tab = orgTabOf(pathname);
  who ??= tab?.tab[3](tab.org);
  const because = reason && <span className="muted">The platform answered: “{reason}”.</span>;
  if (part)
    return (
      <p className="no-access">
        You don’t have access to {part}. {because}
      </p>
    );
  return (
    <section className="panel no-access" aria-labelledby={id}>
      <h1 id={id}>You don’t have access to this</h1>
      <p>
        {who ? `This screen is for ${who}.` : 'Your account does not hold the permission this screen needs.'} If you need it, ask{' '}
        {org ? `an owner of ${org}` : 'a site admin'}.
      </p>
      {reason && <p>{because}</p>}
      <nav aria-label="Where to go instead">
        {org && (
          <>
            <Link to={`/orgs/${encodeURIComponent(org)}`}>Back to {org}</Link>
            {' · '}
          </>
        )}
        <Link to="/orgs">Your organizations</Link>
      </nav>
    </section>
  );
}

/** The page for a refusal: the API's message as the reason, a `Refusal`'s own words as who may. */
function RefusalPage({ refusal }: { refusal: ApiError | Refusal }) {
  return refusal instanceof Refusal ? <NoAccess who={refusal.who} /> : <NoAccess reason={refusal.message} />;
}

interface BoundaryState {
  /** What the screen threw, if it did. */
  thrown?: { error: unknown };
  pathname: string;
}

/** Catches a refusal thrown while a screen renders and shows the page instead; anything else goes on up. */
class NoAccessBoundary extends Component<{ pathname: string; children: ReactNode }, BoundaryState> {
  state: BoundaryState = { pathname: this.props.pathname };

  static getDerivedStateFromError(error: unknown): Partial<BoundaryState> {
    return { thrown: { error } };
  }

  // Another screen opened: it may be one the caller sees.
  static getDerivedStateFromProps(props: { pathname: string }, state: BoundaryState): Partial<BoundaryState> | null {
    return props.pathname === state.pathname ? null : { thrown: undefined, pathname: props.pathname };
  }

  render() {
    const { thrown } = this.state;
    if (!thrown) return this.props.children;
    if (isRefusal(thrown.error)) return <RefusalPage refusal={thrown.error} />;
    // Not a refusal: for whatever handles errors above, as if this boundary were not here.
    throw thrown.error;
  }
}

/** Around every screen (the shell, and the component tests): a refusal anywhere in it shows the page alone. */
export function ScreenAccess({ children }: { children: ReactNode }) {
  return <NoAccessBoundary pathname={useLocation().pathname}>{children}</NoAccessBoundary>;
}

/**
 * What React does with an error a boundary caught (`createRoot`'s `onCaughtError`). What this page's boundary caught
 * is not logged: a refusal is an answer shown to the user, not a fault, and anything else it throws on, so React
 * reports it as uncaught. Other boundaries' catches are logged, as React would.
 */
export function reportCaughtError(error: unknown, info: { componentStack?: string; errorBoundary?: Component<unknown> }): void {
  if (!(info.errorBoundary instanceof NoAccessBoundary)) console.error(error, info.componentStack);
}
