import { useId } from 'react';

/**
 * Inputs the shared ui has no component for (a checkbox, a text area, a text field with suggestions), kept in
 * this area so ui/ stays as it is. Each is a real labelled control.
 */

export function Check({ label, name, value, defaultChecked }: { label: string; name: string; value?: string; defaultChecked?: boolean }) {
  return (
    <label>
      <input type="checkbox" name={name} value={value ?? 'true'} defaultChecked={defaultChecked} />
      {label}
    </label>
  );
}

export function TextArea({ label, name, hint, placeholder }: { label: string; name: string; hint?: string; placeholder?: string }) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <textarea id={id} name={name} rows={3} placeholder={placeholder} />
      {hint && <small>{hint}</small>}
    </div>
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
