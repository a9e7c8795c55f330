import type { ReactNode } from 'react';
import { ErrorMessage } from '../../ui';
import type { Loaded } from '../../ui/data';
import { isRefusal } from '../../ui/no-access';
import { isGatedOff } from './context';

// What the admin screens share: a feature this deployment does not serve, said plainly.

/** Says plainly that a feature is not served by this deployment (its routes answer 404) instead of an error. */
export function NotOnThisDeployment({ feature, why }: { feature: string; why: ReactNode }) {
  return (
    <div role="status" className="panel">
      <h2>{feature}: not available on this deployment</h2>
      <p>{why}</p>
    </div>
  );
}

/** Like `Show`, but a 404 (a route gated off on this deployment) renders `gated` instead of an error. */
export function ShowGated<T>({ loaded, gated, children }: { loaded: Loaded<T>; gated: ReactNode; children: (data: T) => ReactNode }) {
  if (isGatedOff(loaded.error)) return <>{gated}</>;
  // As `Show`: a refusal makes the whole screen the "no access" page.
  if (isRefusal(loaded.error)) throw loaded.error;
  if (loaded.error) return <ErrorMessage error={loaded.error} />;
  if (loaded.data === undefined) return <p aria-busy="true">Loading…</p>;
  return <>{children(loaded.data)}</>;
}
