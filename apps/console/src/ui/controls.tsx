import { useId, useState } from 'react';

// Inputs the form components of ui/index.tsx do not cover (a checkbox, a text area), and a confirming button.

/** A labelled checkbox. */
export function Checkbox({ label, name, defaultChecked }: { label: string; name: string; defaultChecked?: boolean }) {
  return (
    <div className="field">
      <label>
        <input type="checkbox" name={name} defaultChecked={defaultChecked} /> {label}
      </label>
    </div>
  );
}

/** A labelled multi-line input. */
export function TextArea({
  label,
  name,
  hint,
  rows = 3,
  defaultValue,
}: {
  label: string;
  name: string;
  hint?: string;
  rows?: number;
  defaultValue?: string;
}) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <textarea id={id} name={name} rows={rows} cols={28} defaultValue={defaultValue} />
      {hint && <small>{hint}</small>}
    </div>
  );
}

/**
 * A button for an action that cannot be undone: the first press asks, a second button ("Confirm …") does it. Inline
 * rather than window.confirm so it is announced, keyboard-reachable and styled like the rest.
 */
export function ConfirmButton({
  label,
  confirmLabel,
  onConfirm,
  busy,
}: {
  label: string;
  confirmLabel: string;
  onConfirm: () => void;
  busy?: boolean;
}) {
  const [asking, setAsking] = useState(false);
  if (!asking)
    return (
      <button type="button" className="danger" onClick={() => setAsking(true)} disabled={busy}>
        {label}
      </button>
    );
  return (
    <span role="group" aria-label={label}>
      <button
        type="button"
        className="danger"
        autoFocus
        onClick={() => {
          setAsking(false);
          onConfirm();
        }}
      >
        {confirmLabel}
      </button>{' '}
      <button type="button" onClick={() => setAsking(false)}>
        Cancel
      </button>
    </span>
  );
}
