import { useId } from 'react';

/**
 * Inputs only this area uses (a bare checkbox with a value, for a fieldset; a text field with suggestions). Each is a
 * real labelled control.
 */

export function Check({ label, name, value, defaultChecked }: { label: string; name: string; value?: string; defaultChecked?: boolean }) {
  return (
    <label>
      <input type="checkbox" name={name} value={value ?? 'true'} defaultChecked={defaultChecked} />
      {label}
    </label>
  );
}

/** A text field offering known values (a datalist) while taking any. */
export function SuggestField({
  label,
  name,
  suggestions,
  hint,
  defaultValue,
  required,
}: {
  label: string;
  name: string;
  suggestions: [value: string, text: string][];
  hint?: string;
  defaultValue?: string;
  required?: boolean;
}) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>
        {label}
        {required && <span aria-hidden="true"> *</span>}
      </label>
      <input id={id} name={name} list={`${id}-list`} defaultValue={defaultValue} required={required} autoComplete="off" />
      <datalist id={`${id}-list`}>
        {suggestions.map(([value, text]) => (
          <option key={value} value={value}>
            {text}
          </option>
        ))}
      </datalist>
      {hint && <small>{hint}</small>}
    </div>
  );
}
