import { Field, Select } from '../../ui';
import { Choices } from '../../ui/choices';
import { lengthProblem, teamNameProblem, text, ids } from './names';
import { isOwnerTeam, roleIdsOf, type Role, type Team } from './org-data';

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
    </>
  );
}

export function teamProblem(data: FormData, team?: Team): string | undefined {
  const nameProblem = team && isOwnerTeam(team) ? undefined : teamNameProblem(text(data, 'name'));
  return nameProblem ?? lengthProblem('Description', text(data, 'description'));
}

/** The body of a create or edit: `assignedRoleIDs` always, so unchecking every role removes them (`[]`). */
export function teamBody(data: FormData, team?: Team) {
  const owner = team !== undefined && isOwnerTeam(team);
  return {
    name: owner ? team.name : text(data, 'name'),
    description: text(data, 'description'),
    type: text(data, 'type'),
    assignedRoleIDs: ids(data, 'assignedRoleIDs'),
    ...(owner ? {} : { permission: text(data, 'permission') }),
  };
}
