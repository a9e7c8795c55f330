import { useId } from 'react';

/**
 * A labelled select whose choice applies at once (the screen's filters live in the address, so a change is a new
 * screen). The shared `Select` is uncontrolled, for forms that send on submit; this one is controlled.
 */
export function Choice<V extends string>({
  label,
  value,
  options,
  onChange,
  disabled,
}: {
  label: string;
  value: V | undefined;
  options: readonly (readonly [value: V, text: string])[];
  onChange: (value: V) => void;
  disabled?: boolean;
}) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <select
        id={id}
        value={value ?? ''}
        disabled={disabled || options.length === 0}
        onChange={(e) => {
          // The option's own value, so no cast: an unknown value (none can be picked) is ignored.
          const picked = options.find(([v]) => v === e.target.value);
          if (picked) onChange(picked[0]);
        }}
      >
        {value === undefined && <option value="">—</option>}
        {options.map(([v, text]) => (
          <option key={v} value={v}>
            {text}
          </option>
        ))}
      </select>
    </div>
  );
}
