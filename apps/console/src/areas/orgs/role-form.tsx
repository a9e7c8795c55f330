import type { ChangeEvent, MouseEvent } from 'react';
import type { Schema } from '../../api/client';
import { Field } from '../../ui';
import { Choices } from '../../ui/choices';
import { ids, lengthProblem, MAX_TEXT, text } from './names';
import type { Role, Team } from './org-data';
import { groupCatalog, ROLE_PRESETS, type RolePreset } from './role-groups';

export type Catalog = Schema<'VirtualPermissionsData'>['permissions'];
type Permission = { namespace: string; action: string };

/** A permission as a checkbox value; `/` appears in neither namespaces nor actions. */
const keyOf = (p: Permission) => `${p.namespace}/${p.action}`;
/** A permission as the API's messages name it (`edit:org`), so a 403 naming missing ones reads the same. */
export const permissionName = (p: Permission) => `${p.action}:${p.namespace}`;

/** What each permission needs with it (the catalog's `associated` entries marked `required`). */
function requiredWith(catalog: Catalog): Map<string, string[]> {
  return new Map(catalog.map((p) => [keyOf(p), (p.associated ?? []).filter((a) => a.required).map(keyOf)]));
}

/** The permissions a preset checks, of those the catalog offers. */
function presetKeys(preset: RolePreset, catalog: Catalog): Set<string> {
  const names = preset.permissions === 'all' ? undefined : new Set(preset.permissions);
  return new Set(catalog.filter((p) => !names || names.has(permissionName(p))).map(keyOf));
}

/**
 * The fields of a custom role: name, description, the permission catalog as checkboxes grouped by what a person
 * manages (members, teams, roles, clusters, contracts, tokens, the organization's profile: role-groups.ts), each
 * group with what it is about, presets to start from (Viewer, Editor, Admin), and the teams it is assigned to.
 * Checking a permission also checks those it requires (e.g. View teams with Edit teams), and they are sent with it in
 * any case.
 */
export function RoleFields({ catalog, teams, role }: { catalog: Catalog; teams: Team[]; role?: Role }) {
  const needs = requiredWith(catalog);
  const held = new Set((role?.permissions ?? []).map(keyOf));
  const checkRequired = (e: ChangeEvent<HTMLInputElement>) => {
    const box = e.currentTarget;
    if (!box.checked || !box.form) return;
    for (const key of needs.get(box.value) ?? []) {
      const other = box.form.querySelector<HTMLInputElement>(`input[name="permissions"][value="${CSS.escape(key)}"]`);
      if (other) other.checked = true;
    }
  };
  // A preset replaces what is checked: it is where a role starts, then boxes are checked or cleared one by one.
  const startFrom = (preset: RolePreset) => (e: MouseEvent<HTMLButtonElement>) => {
    const chosen = presetKeys(preset, catalog);
    for (const box of e.currentTarget.form?.querySelectorAll<HTMLInputElement>('input[name="permissions"]') ?? [])
      box.checked = chosen.has(box.value);
  };
  return (
    <>
      <Field label="Role name" name="name" required defaultValue={role?.name} autoComplete="off" />
      <Field label="Description" name="description" defaultValue={role?.description} />
      <fieldset>
        <legend>Permissions</legend>
        <div className="presets" role="group" aria-label="Start from a preset">
          <span>Start from:</span>
          {ROLE_PRESETS.map((preset) => (
            <button key={preset.name} type="button" title={preset.description} onClick={startFrom(preset)}>
              {preset.name}
            </button>
          ))}
          <button type="button" title="No permission checked" onClick={startFrom({ name: 'None', description: '', permissions: [] })}>
            None
          </button>
        </div>
        <ul className="muted presets-about">
          {ROLE_PRESETS.map((preset) => (
            <li key={preset.name}>
              <strong>{preset.name}</strong>: {preset.description}
            </li>
          ))}
        </ul>
        {groupCatalog(catalog).map((group) => (
          <Choices
            key={group.title}
            legend={group.title}
            description={group.description}
            name="permissions"
            checked={held}
            onChange={checkRequired}
            choices={group.entries.map((p) => ({
              value: keyOf(p),
              // One span, so the label's flex layout keeps the name and its code on the same lines.
              label: (
                <span>
                  {p.description} <code>({permissionName(p)})</code>
                </span>
              ),
            }))}
          />
        ))}
      </fieldset>
      <Choices
        legend="Assigned teams"
        name="teamIDs"
        checked={new Set((role?.team_ids ?? []).map(String))}
        choices={teams.map((t) => ({ value: String(t.id), label: t.name }))}
      />
    </>
  );
}

export function roleProblem(data: FormData): string | undefined {
  if (!text(data, 'name')) return 'Role name is required';
  return lengthProblem('Role name', text(data, 'name'), MAX_TEXT) ?? lengthProblem('Description', text(data, 'description'));
}

/** The body of a create or an edit: every field, since an edit replaces what it is given (`[]` clears). */
export function roleBody(data: FormData, catalog: Catalog) {
  const needs = requiredWith(catalog);
  const chosen = new Set(data.getAll('permissions').map(String));
  for (const key of [...chosen]) for (const need of needs.get(key) ?? []) chosen.add(need);
  const permissions = catalog.filter((p) => chosen.has(keyOf(p))).map(({ namespace, action }) => ({ namespace, action }));
  return { name: text(data, 'name'), description: text(data, 'description'), permissions, teamIDs: ids(data, 'teamIDs') };
}
