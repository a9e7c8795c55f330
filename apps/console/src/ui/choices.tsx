import { useId, type ChangeEvent, type ReactNode } from 'react';

export interface Choice {
  value: string;
  label: ReactNode;
}

/**
 * A group of checkboxes sharing a `name` (read back with `FormData.getAll`), under a legend: the custom roles
 * of a team or a service account, the teams of a role, the permissions of a role.
 */
export function Choices({
  legend,
  description,
  name,
  choices,
  checked,
  empty,
  onChange,
}: {
  legend: string;
  /** What the group is about, under its legend. */
  description?: ReactNode;
  name: string;
  choices: Choice[];
  checked: ReadonlySet<string>;
  empty?: ReactNode;
  onChange?: (e: ChangeEvent<HTMLInputElement>) => void;
}) {
  const id = useId();
  return (
    <fieldset aria-describedby={description ? id : undefined}>
      <legend>{legend}</legend>
      {description && (
        <p id={id} className="muted choices-about">
          {description}
        </p>
      )}
      {choices.length === 0 && <span className="muted">{empty ?? 'None.'}</span>}
      {choices.map((c) => (
        <label key={c.value}>
          <input type="checkbox" name={name} value={c.value} defaultChecked={checked.has(c.value)} onChange={onChange} />
          {c.label}
        </label>
      ))}
    </fieldset>
  );
}
