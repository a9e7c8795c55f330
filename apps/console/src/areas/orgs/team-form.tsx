import { Field, Select } from '../../ui';
import { Choices } from '../../ui/choices';
import { lengthProblem, teamNameProblem, text, ids } from './names';
import { isOwnerTeam, roleIdsOf, roleUntilOf, type Role, type Team } from './org-data';

/** Team permissions a create accepts; an edit also takes `custom` (the team's rights come from its roles only). */
const CREATE_PERMISSIONS = ['read', 'write', 'admin'];
const EDIT_PERMISSIONS = [...CREATE_PERMISSIONS, 'custom'];
const TYPES: [string, string][] = [
  ['general', 'general'],
  ['kubernetes', 'kubernetes (works on the clusters)'],
];

/**
 * The fields of a team, empty for a new one or filled from `team`. The owner team keeps its name and
 * permission (the API refuses to change them), so those are shown, not offered.
 */
export function TeamFields({ roles, team }: { roles: Role[]; team?: Team }) {
  const owner = team !== undefined && isOwnerTeam(team);
  return (
    <>
      {owner ? (
        <p>
          <strong>{team.name}</strong>: permission <code>owner</code> (fixed)
        </p>
      ) : (
        <Field label="Team name" name="name" required defaultValue={team?.name} hint="Letters, digits, _ . - (no spaces)" autoComplete="off" />
      )}
      <Field label="Description" name="description" defaultValue={team?.description} />
      {!owner && <Select label="Permission" name="permission" options={team ? EDIT_PERMISSIONS : CREATE_PERMISSIONS} defaultValue={team?.permission ?? 'read'} />}
      <Select label="Type" name="type" options={TYPES} defaultValue={team?.type ?? 'general'} />
      <Choices
        legend="Custom roles"
        name="assignedRoleIDs"
        choices={roles.map((r) => ({ value: String(r.id), label: r.name }))}
        checked={new Set((team ? roleIdsOf(team) : []).map(String))}
        empty="The organization has no custom roles yet (see Roles)."
      />
      {roles.length > 0 && (
        <fieldset>
          <legend>Until (optional)</legend>
          <small>A checked role with a date is held until that day begins (UTC); without one it is held for good.</small>
          {roles.map((r) => {
            const end = roleUntilOf(team)[r.id];
            return <Field key={r.id} label={`${r.name} until`} name={untilField(r.id)} type="date" defaultValue={end && dayOf(end)} />;
          })}
        </fieldset>
      )}
    </>
  );
}

/** The date field of one role's end. */
const untilField = (roleId: number) => `until.${roleId}`;
/** The UTC day of an RFC 3339 time, as a date input holds it. */
const dayOf = (at: string) => new Date(at).toISOString().slice(0, 10);

/**
 * The ends of the checked roles that have a date: the start of that day in UTC, or the team's own end unchanged when
 * the date is still its day (an end set through the API at another hour keeps that hour).
 */
function roleEnds(data: FormData, team?: Team): Record<string, string> {
  const ends: Record<string, string> = {};
  for (const id of ids(data, 'assignedRoleIDs')) {
    const day = text(data, untilField(id));
    if (!day) continue;
    const current = roleUntilOf(team)[id];
    ends[id] = current && dayOf(current) === day ? current : `${day}T00:00:00Z`;
  }
  return ends;
}

export function teamProblem(data: FormData, roles: Role[], team?: Team): string | undefined {
  const nameProblem = team && isOwnerTeam(team) ? undefined : teamNameProblem(text(data, 'name'));
  return nameProblem ?? lengthProblem('Description', text(data, 'description')) ?? endProblem(data, roles);
}

/** A date for a role left unchecked, or an end already past (the API refuses both). */
function endProblem(data: FormData, roles: Role[]): string | undefined {
  const checked = new Set(ids(data, 'assignedRoleIDs'));
  for (const r of roles) {
    const day = text(data, untilField(r.id));
    if (!day) continue;
    if (!checked.has(r.id)) return `${r.name} has an end date but is not checked: check it or clear the date.`;
    if (Date.parse(`${day}T00:00:00Z`) <= Date.now()) return `The end of ${r.name} has passed: pick a later date or clear it.`;
  }
  return undefined;
}

/**
 * The body of a create or edit: `assignedRoleIDs` and `assignedRoleUntil` always, so unchecking every role removes
 * them (`[]`) and clearing a date makes that role permanent.
 */
export function teamBody(data: FormData, team?: Team) {
  const owner = team !== undefined && isOwnerTeam(team);
  return {
    name: owner ? team.name : text(data, 'name'),
    description: text(data, 'description'),
    type: text(data, 'type'),
    assignedRoleIDs: ids(data, 'assignedRoleIDs'),
    assignedRoleUntil: roleEnds(data, team),
    ...(owner ? {} : { permission: text(data, 'permission') }),
  };
}
