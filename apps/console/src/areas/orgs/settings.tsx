import { useQuery } from '@tanstack/react-query';
import { useId, useState } from 'react';
import { useNavigate } from 'react-router';
import { ErrorMessage, Field, Form, Outcome, Section, Select, Show, useAction } from '../../ui';
import { TextArea } from '../../ui/controls';
import { OrgNav } from '../../ui/org-nav';
import {
  fetchAvatar,
  orgKeys,
  useDeleteAvatar,
  useDeleteOrg,
  useEditOrg,
  useOrg,
  useOrgAllowed,
  useUploadAvatar,
  type OrgEdit,
} from './api';
import { VISIBILITIES } from './org-list';
import { useOrgName } from './org-data';
import { lengthProblem, text } from './names';

/** The field limits orgs-teams applies (docs/limits.md). */
const LIMITS = { full_name: 100, description: 255, website: 255, location: 50 };
/** The image types an avatar may be (orgs-teams recognises them by their bytes). */
const AVATAR_TYPES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'];

/**
 * `/orgs/:org/settings`, as Gitea's organization settings: the organization's options (`edit:org`), its avatar
 * (`update:avatar`, `delete:avatar`) and deleting it (`delete:org`: its last owner or a site admin), each part offered
 * to whoever holds its relation; anyone holding none gets the "no access" page (the tab's, `OrgNav`).
 */
export function OrgSettings() {
  const org = useOrgName();
  const can = useOrgAllowed(org);
  return (
    <>
      <OrgNav org={org} />
      {can('edit') && <Options org={org} />}
      {(can('update_avatar') || can('delete_avatar')) && <Avatar org={org} upload={can('update_avatar')} remove={can('delete_avatar')} />}
      {can('delete') && <DeleteOrg org={org} />}
    </>
  );
}

function websiteProblem(value: string): string | undefined {
  if (!value) return undefined;
  try {
    const url = new URL(value);
    if (url.protocol === 'http:' || url.protocol === 'https:') return lengthProblem('Website', value, LIMITS.website);
  } catch {
    // Not a URL at all: said below.
  }
  return 'Website: a web address starting with http:// or https://';
}

function Options({ org }: { org: string }) {
  const loaded = useOrg(org);
  const action = useAction();
  const edit = useEditOrg(org);
  return (
    <Section title="Options">
      <Show loaded={loaded}>
        {(o) => (
          <Form
            // A fresh form for what is stored now, after a save too.
            key={`${o.full_name}|${o.description}|${o.website}|${o.location}|${o.visibility}`}
            label="Organization options"
            submitLabel="Save options"
            action={action}
            validate={(data) =>
              lengthProblem('Full name', text(data, 'full_name'), LIMITS.full_name) ??
              lengthProblem('Description', text(data, 'description'), LIMITS.description) ??
              websiteProblem(text(data, 'website')) ??
              lengthProblem('Location', text(data, 'location'), LIMITS.location)
            }
            submit={async (data) => {
              const body: OrgEdit = {
                full_name: text(data, 'full_name'),
                description: text(data, 'description'),
                website: text(data, 'website'),
                location: text(data, 'location'),
                visibility: text(data, 'visibility'),
              };
              await edit.mutateAsync(body);
              return `Saved the options of ${org}.`;
            }}
          >
            <Field label="Full name" name="full_name" defaultValue={o.full_name} />
            <TextArea label="Description" name="description" defaultValue={o.description} />
            <Field label="Website" name="website" type="url" defaultValue={o.website} placeholder="https://example.com" />
            <Field label="Location" name="location" defaultValue={o.location} />
            <Select label="Visibility" name="visibility" options={VISIBILITIES} defaultValue={o.visibility || 'public'} />
          </Form>
        )}
      </Show>
    </Section>
  );
}

/**
 * The console's pages may show images from the platform only (its Content-Security-Policy), so an avatar is shown
 * from the path of the platform's signed URL, whatever host the platform's public URL names; an image of a lookup
 * service (Gravatar) is offered as a link instead.
 */
function shownAvatar(url: string): string | undefined {
  try {
    const parsed = new URL(url, window.location.href);
    return parsed.pathname.startsWith('/api/v1/objects/') ? `${parsed.pathname}${parsed.search}` : undefined;
  } catch {
    return undefined;
  }
}

function Avatar({ org, upload, remove }: { org: string; upload: boolean; remove: boolean }) {
  const avatar = useQuery({ queryKey: orgKeys.avatar(org), queryFn: () => fetchAvatar(org) });
  const deleting = useDeleteAvatar(org);
  const reset = useAction();
  return (
    <Section title="Avatar">
      <Show loaded={avatar} part="the current avatar">
        {(url) => {
          const src = shownAvatar(url);
          return src ? (
            <img className="avatar" src={src} alt={`Avatar of ${org}`} width={96} height={96} />
          ) : (
            <p>
              Shown from <a href={url}>{url}</a>.
            </p>
          );
        }}
      </Show>
      {upload && <AvatarUpload org={org} />}
      {remove && (
        <div className="form">
          <button
            type="button"
            disabled={reset.busy}
            onClick={() =>
              void reset.run(async () => {
                await deleting.mutateAsync();
                return `The avatar of ${org} is the generated one again.`;
              })
            }
          >
            Delete avatar
          </button>
          <Outcome action={reset} />
        </div>
      )}
    </Section>
  );
}

/** A new image: the chosen file is checked, then sent as the form's `avatar` part. */
function AvatarUpload({ org }: { org: string }) {
  const uploading = useUploadAvatar(org);
  const action = useAction();
  const [file, setFile] = useState<File>();
  const [problem, setProblem] = useState<string>();
  const id = useId();
  return (
    <form
      className="form"
      aria-label="New avatar"
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        const form = e.currentTarget;
        const wrong = !file ? 'Choose an image' : AVATAR_TYPES.includes(file.type) ? undefined : 'Avatar: a PNG, JPEG, GIF or WebP image';
        setProblem(wrong);
        if (wrong || !file) return;
        void action.run(async () => {
          await uploading.mutateAsync(file);
          form.reset();
          setFile(undefined);
          return `The avatar of ${org} is the new image.`;
        });
      }}
    >
      <div className="field">
        <label htmlFor={id}>Image</label>
        <input id={id} name="avatar" type="file" accept={AVATAR_TYPES.join(',')} onChange={(e) => setFile(e.target.files?.[0])} />
        <small>PNG, JPEG, GIF or WebP</small>
      </div>
      <button type="submit" disabled={action.busy}>
        {action.busy ? 'Working…' : 'Upload avatar'}
      </button>
      {problem && (
        <p role="alert" className="error">
          {problem}
        </p>
      )}
      <Outcome action={action} />
    </form>
  );
}

/**
 * Deleting takes the organization's name typed out, as Gitea asks: it cannot be undone, and its teams, custom roles
 * and service accounts go with it. The API refuses an owner while other owners remain, and says so.
 */
function DeleteOrg({ org }: { org: string }) {
  const [typed, setTyped] = useState('');
  const deletion = useDeleteOrg(org);
  const navigate = useNavigate();
  const id = useId();
  const [error, setError] = useState<unknown>();
  const confirmed = typed.trim() === org;
  return (
    <Section title="Delete this organization">
      <p>
        Deleting <strong>{org}</strong> removes its teams, memberships, custom roles and service accounts for good. Only its last owner, or a
        site admin, may delete it.
      </p>
      <form
        className="form"
        aria-label={`Delete organization ${org}`}
        onSubmit={(e) => {
          e.preventDefault();
          if (!confirmed) return;
          setError(undefined);
          deletion.mutate(undefined, {
            onSuccess: () => void navigate('/orgs', { state: { done: `Deleted organization ${org}.` } }),
            onError: setError,
          });
        }}
      >
        <div className="field">
          <label htmlFor={id}>Type {org} to confirm</label>
          <input id={id} value={typed} autoComplete="off" spellCheck={false} onChange={(e) => setTyped(e.target.value)} />
        </div>
        <button type="submit" className="danger" disabled={!confirmed || deletion.isPending}>
          {deletion.isPending ? 'Deleting…' : `Delete organization ${org}`}
        </button>
        <ErrorMessage error={error} />
      </form>
    </Section>
  );
}
