import { useQuery } from '@tanstack/react-query';
import { useEffect, useId, useRef, useState, type KeyboardEvent } from 'react';
import { ErrorMessage } from '../../ui';
import { searchUsers, userKeys, type User } from './api';

/** How long typing rests before the API is asked: one search per pause, not one per key. */
const PAUSE_MS = 200;
const SHOWN = 8;

/**
 * A username field that searches as you type (`GET /users/search`, which any signed-in user may call: login and full
 * name) and offers the matching users to pick, as an ARIA combobox: the arrow keys move through them, Enter picks
 * one, Escape closes the list. What is in the field is what the form sends, so a login typed out whole works too.
 */
export function UserPicker({ label, name, hint }: { label: string; name: string; hint?: string }) {
  const id = useId();
  const listId = `${id}-users`;
  const input = useRef<HTMLInputElement>(null);
  const [value, setValue] = useState('');
  const [asked, setAsked] = useState('');
  const [open, setOpen] = useState(false);
  const [active, setActive] = useState(-1);
  useEffect(() => {
    const pause = setTimeout(() => setAsked(value.trim()), PAUSE_MS);
    return () => clearTimeout(pause);
  }, [value]);
  // The form's reset after a successful add empties the field too (its value is this component's).
  useEffect(() => {
    const form = input.current?.form;
    const emptied = () => {
      setValue('');
      setOpen(false);
    };
    form?.addEventListener('reset', emptied);
    return () => form?.removeEventListener('reset', emptied);
  }, []);
  const found = useQuery({ queryKey: userKeys.search(asked), queryFn: () => searchUsers(asked, SHOWN), enabled: asked !== '', staleTime: 30_000 });
  const users = asked !== '' && asked === value.trim() ? (found.data ?? []) : [];
  const listed = open && users.length > 0;
  const pick = (user: User) => {
    setValue(user.login);
    setOpen(false);
    setActive(-1);
  };
  const onKeyDown = (e: KeyboardEvent<HTMLInputElement>) => {
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      e.preventDefault();
      setOpen(true);
      if (users.length) setActive((a) => (e.key === 'ArrowDown' ? (a + 1) % users.length : (a <= 0 ? users.length : a) - 1));
    } else if (e.key === 'Enter' && listed && active >= 0 && users[active]) {
      // Picking, not sending the form: Enter sends it once the list is closed.
      e.preventDefault();
      pick(users[active]);
    } else if (e.key === 'Escape' && open) {
      e.preventDefault();
      setOpen(false);
    }
  };
  return (
    <div className="field picker">
      <label htmlFor={id}>
        {label}
        <span aria-hidden="true"> *</span>
      </label>
      <input
        ref={input}
        id={id}
        name={name}
        type="text"
        role="combobox"
        aria-autocomplete="list"
        aria-expanded={listed}
        aria-controls={listId}
        aria-activedescendant={listed && active >= 0 ? `${listId}-${active}` : undefined}
        required
        autoComplete="off"
        spellCheck={false}
        value={value}
        onChange={(e) => {
          setValue(e.target.value);
          setOpen(true);
          setActive(-1);
        }}
        onKeyDown={onKeyDown}
        onBlur={() => setOpen(false)}
      />
      <ul id={listId} role="listbox" aria-label={`Users matching ${value.trim()}`} hidden={!listed} className="picker-list">
        {listed &&
          users.map((u, i) => (
            <li
              key={u.id}
              id={`${listId}-${i}`}
              role="option"
              aria-selected={i === active}
              // On mouse down, before the field's blur closes the list.
              onMouseDown={(e) => {
                e.preventDefault();
                pick(u);
              }}
            >
              <strong>{u.login}</strong>
              {u.full_name && <span className="muted"> {u.full_name}</span>}
            </li>
          ))}
      </ul>
      {open && asked !== '' && asked === value.trim() && found.data?.length === 0 && <small role="status">No user matches “{asked}”.</small>}
      <ErrorMessage error={found.error} />
      {hint && <small>{hint}</small>}
    </div>
  );
}
