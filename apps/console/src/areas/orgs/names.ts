/**
 * The name rules the API applies (docs/organizations-and-teams.md), checked before sending so a form can say
 * what is wrong without a round trip; the API checks them again and its message is shown if it refuses.
 */

/** Gitea's login rule, for organizations and users: letters, digits, and . _ - inside, at most 40 characters. */
const LOGIN = /^[a-zA-Z0-9](?:[a-zA-Z0-9._-]{0,38}[a-zA-Z0-9])?$/;
/** Team names: 1–255 letters, digits, `_`, `.`, `-`. */
const TEAM_NAME = /^[a-zA-Z0-9_.-]{1,255}$/;
/** Descriptions of organizations, teams and custom roles, and custom role names (docs/limits.md). */
export const MAX_TEXT = 255;

export function loginProblem(label: string, value: string): string | undefined {
  if (!value) return `${label} is required`;
  if (!LOGIN.test(value)) return `${label}: letters, digits, ".", "_" or "-" inside (not at either end); at most 40 characters`;
  return undefined;
}

export function teamNameProblem(value: string): string | undefined {
  if (!value) return 'Team name is required';
  if (!TEAM_NAME.test(value)) return 'Team name: 1 to 255 letters, digits, "_", "." or "-" (no spaces)';
  return undefined;
}

export function lengthProblem(label: string, value: string, max = MAX_TEXT): string | undefined {
  return value.length > max ? `${label}: at most ${max} characters` : undefined;
}

/** The text of a form field, trimmed. */
export function text(data: FormData, name: string): string {
  return String(data.get(name) ?? '').trim();
}

/** The checked values of a group of checkboxes sharing a name, as ids. */
export function ids(data: FormData, name: string): number[] {
  return data.getAll(name).map(Number).filter((id) => Number.isInteger(id) && id > 0);
}
