import { Fragment, type ReactNode } from 'react';
import { Link, useParams } from 'react-router';
import { api, ok } from '../../api/client';
import { ErrorMessage, Field, Form, useAction } from '../../ui';
import { useReport } from './api';
import { carried, useQuery } from './query';
import './billing.css';

/**
 * Where a licensed-dashboard screen is: a licensed user (`uid`), one of its clusters (`cid`), a license reported
 * there (`lid`) and a product received under it — the path of the API's own rows, one screen per level.
 */
export interface Trail {
  uid: number;
  cid?: string;
  lid?: string;
  product?: string;
}

const BASE = '/admin/billing/licensed';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The console path of a level of the trail. */
export function trailPath(trail: Trail): string {
  let path = `${BASE}/users/${trail.uid}`;
  if (trail.cid) path += `/clusters/${encodeURIComponent(trail.cid)}`;
  if (trail.cid && trail.lid) path += `/licenses/${encodeURIComponent(trail.lid)}`;
  if (trail.cid && trail.lid && trail.product) path += `/products/${encodeURIComponent(trail.product)}`;
  return path;
}

/** The trail in the address, checked as the API checks it, so a mistyped address says what is wrong. */
export function useTrail(): { trail?: Trail; problem?: string } {
  const { uid, cid, lid, product } = useParams();
  const id = Number(uid);
  if (!Number.isInteger(id) || id <= 0) return { problem: `The user id must be a positive integer, not "${uid}".` };
  if (cid !== undefined && !UUID.test(cid)) return { problem: `The cluster must be a cluster UID (a UUID), not "${cid}".` };
  return { trail: { uid: id, cid, lid, product } };
}

/** What every licensed screen below the users shows first: the trail, or why the address is wrong. */
export function Trailed({ org, children }: { org: string; children: (trail: Trail) => ReactNode }) {
  const { trail, problem } = useTrail();
  if (!trail) return <ErrorMessage error={problem} />;
  return (
    <>
      <Breadcrumbs org={org} trail={trail} />
      {children(trail)}
    </>
  );
}

/** A link to another billing screen, keeping the org context and the activity window. */
export function BillingLink({ to, children, label }: { to: string; children: ReactNode; label?: string }) {
  const [params] = useQuery();
  return (
    <Link to={{ pathname: to, search: carried(params) }} aria-label={label}>
      {children}
    </Link>
  );
}

/** Where the screen is, each level a link back up; names where the API gives them, else ids. */
export function Breadcrumbs({ org, trail }: { org: string; trail: Trail }) {
  const account = useReport(['account', org], () => ok(api.GET('/dashboard/users/', { params: { query: { org } } })));
  const cid = trail.cid;
  // The same question as the cluster's own screen asks, so the two share one answer.
  const cluster = useReport(
    ['cluster', org, trail.uid, cid],
    () => ok(api.GET('/dashboard/users/{uid}/clusters/{cid}', { params: { path: { uid: trail.uid, cid: cid! }, query: { org } } })),
    Boolean(cid),
  );
  // The names only decorate the trail: when they do not load, the sections below show why.
  const accountName = account.data?.find((u) => u.userID === trail.uid)?.username;
  const levels: [path: string, text: string][] = [
    [BASE, 'Licensed users'],
    [trailPath({ uid: trail.uid }), accountName ? `${accountName} (user ${trail.uid})` : `User ${trail.uid}`],
  ];
  if (cid) levels.push([trailPath({ uid: trail.uid, cid }), `Cluster ${cluster.data?.name || cid}`]);
  if (cid && trail.lid) levels.push([trailPath({ uid: trail.uid, cid, lid: trail.lid }), `License ${trail.lid}`]);
  if (cid && trail.lid && trail.product) levels.push([trailPath(trail), `Product ${trail.product}`]);
  return (
    <nav aria-label="Breadcrumb" className="tabs">
      {levels.map(([path, text], i) => (
        <Fragment key={path}>
          {i > 0 && <span aria-hidden="true">›</span>}
          {i === levels.length - 1 ? <span aria-current="page">{text}</span> : <BillingLink to={path}>{text}</BillingLink>}
        </Fragment>
      ))}
    </nav>
  );
}

/** The activity window when the address names none (the API's own default is 180 days). */
export const DEFAULT_WINDOW = '720h';

/** The activity window (`limit`) of the "active" rows: a Go duration back from now or a date. */
export function useWindow(): string {
  const [params] = useQuery();
  return params.get('limit') || DEFAULT_WINDOW;
}

const GO_DURATION = /^(?:(?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|μs|ms|s|m|h))+$/;

/** What is wrong with an activity window, as the API would refuse it (docs/billing-dashboard.md, Parameters). */
export function windowProblem(value: string): string | undefined {
  if (!value) return 'Activity window is required';
  if (GO_DURATION.test(value)) return undefined;
  const date = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (date) {
    const [year, month, day] = date.slice(1).map(Number);
    const parsed = new Date(Date.UTC(year, month - 1, day));
    return parsed.getUTCMonth() === month - 1 && parsed.getUTCDate() === day ? undefined : `${value} is not a date`;
  }
  return 'The activity window is a duration back from now (720h, 90m, 1h30m) or a date (YYYY-MM-DD)';
}

/** Sets the activity window every "active" list on the licensed screens uses. */
export function ActivityWindow() {
  const [, change] = useQuery();
  const limit = useWindow();
  const action = useAction();
  return (
    <Form
      // A new window from the address is the field's new starting value.
      key={limit}
      label="Set the activity window"
      submitLabel="Apply window"
      action={action}
      validate={(d) => windowProblem(String(d.get('limit') ?? '').trim())}
      submit={async (d) => {
        change({ limit: String(d.get('limit')).trim() });
      }}
    >
      <Field
        label="Activity window"
        name="limit"
        required
        defaultValue={limit}
        hint="Reports since: a duration back from now (720h, 90m, 1h30m) or a date (YYYY-MM-DD)"
      />
    </Form>
  );
}

/** Named values as a description list. */
export function Facts({ label, facts }: { label: string; facts: [term: string, value: ReactNode][] }) {
  return (
    <dl aria-label={label} className="facts">
      {facts.map(([term, value]) => (
        <Fragment key={term}>
          <dt>{term}</dt>
          <dd>{value === '' || value === undefined || value === null ? '—' : value}</dd>
        </Fragment>
      ))}
    </dl>
  );
}

/** A value of a free-form object (siteinfo, status, object metadata) when it is text or a number. */
export function textOf(value: unknown, ...path: string[]): string {
  let at = value;
  for (const key of path) at = at && typeof at === 'object' && key in at ? (at as Record<string, unknown>)[key] : undefined;
  return typeof at === 'string' || typeof at === 'number' || typeof at === 'boolean' ? String(at) : '';
}
