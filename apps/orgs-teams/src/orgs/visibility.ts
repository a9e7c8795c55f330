import { InputError } from '@platform/errors';

/**
 * Who may see an organization. `orgType` (an integer in responses, a string in requests) and `visibility`
 * (a string) are two spellings of the same setting, as Gitea's VisibleType: public 0, limited 1, private 2.
 */
export const VISIBILITIES = ['public', 'limited', 'private'] as const;
export type Visibility = (typeof VISIBILITIES)[number];

const parse = (field: string, value: string): number | undefined => {
  if (value === '') return undefined;
  const i = VISIBILITIES.indexOf(value as Visibility);
  if (i < 0) throw new InputError(`${field} must be one of ${VISIBILITIES.join(', ')}`, [{ field, description: 'unknown value' }]);
  return i;
};

/**
 * The visibility a request asks for: from `orgType` or `visibility` (empty means not given), undefined when
 * neither is given; 400 for unknown values or when the two disagree.
 */
export function requestedVisibility(orgType: string | undefined, visibility: string | undefined): number | undefined {
  const a = parse('orgType', orgType ?? '');
  const b = parse('visibility', visibility ?? '');
  if (a !== undefined && b !== undefined && a !== b)
    throw new InputError(`orgType "${orgType}" and visibility "${visibility}" disagree; give one, or the same value twice`);
  return a ?? b;
}

/** The string form of a stored visibility. */
export const visibilityName = (v: number): Visibility => VISIBILITIES[v] ?? 'public';

/** Whether a viewer may see an organization: public to all, limited to signed-in users, private to members and site admins. */
export function canSee(visibility: number, viewer: { signedIn: boolean; member: boolean; siteAdmin: boolean }): boolean {
  if (visibility === 0) return true;
  if (visibility === 1) return viewer.signedIn;
  return viewer.member || viewer.siteAdmin;
}
