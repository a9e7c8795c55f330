import { useState } from 'react';
import { api, ok, type Schema } from '../../api/client';
import type { operations } from '../../api/gen/schema';
import { useBranding } from '../../branding';
import { Field, Form, Outcome, Section, Show, Table, missing, useAction } from '../../ui';
import { siteKeys, useAllowedDomains, useRegistration, useSiteChange, useStoredBranding } from './api';
import { Checkbox } from '../../ui/controls';
import { inAdminOrg } from './context';

// Site settings (docs/site-settings.md): branding, the email-domain whitelist and the registration toggle. All three
// are site-wide; branding is changed through the administrative organization, the others by site admins.

type Branding = Schema<'BrandingResponse'>;
/** The options POST /branding takes (only those sent change). */
type BrandingOptions = operations['settingsEditBranding']['requestBody']['content']['application/json'];

export default function Settings() {
  return (
    <>
      <h1>Site settings</h1>
      <BrandingSettings />
      <AllowedDomains />
      <Registration />
    </>
  );
}

/** An image option's accepted types and decoded size limit, as orgs-teams checks them. */
interface ImageRule {
  label: string;
  types: string[];
  maxBytes: number;
}
const LOGO: ImageRule = {
  label: 'Logo',
  types: ['image/png', 'image/jpeg', 'image/gif', 'image/webp', 'image/svg+xml'],
  maxBytes: 256 * 1024,
};
const FAVICON: ImageRule = {
  label: 'Favicon',
  types: ['image/png', 'image/x-icon', 'image/vnd.microsoft.icon', 'image/gif', 'image/jpeg', 'image/webp', 'image/svg+xml'],
  maxBytes: 64 * 1024,
};
const COLOR = /^#(?:[0-9a-f]{3}|[0-9a-f]{6})$/i;
const APP_NAME_MAX = 64;

/** The chosen file of a file input, or undefined when none was chosen. */
const chosenFile = (data: FormData, name: string) => {
  const file = data.get(name);
  return file instanceof File && file.size > 0 ? file : undefined;
};

const hasControlCharacter = (value: string) => [...value].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f);

function imageProblem(data: FormData, name: string, rule: ImageRule): string | undefined {
  const file = chosenFile(data, name);
  if (!file) return undefined;
  if (!rule.types.includes(file.type)) return `${rule.label} must be one of: ${rule.types.map((t) => t.replace('image/', '')).join(', ')}`;
  if (file.size > rule.maxBytes) return `${rule.label} is ${Math.ceil(file.size / 1024)} KiB; at most ${rule.maxBytes / 1024} KiB`;
  return undefined;
}

function validateBranding(data: FormData): string | undefined {
  const appName = String(data.get('appName') ?? '').trim();
  if (appName.length > APP_NAME_MAX) return `App name: at most ${APP_NAME_MAX} characters`;
  if (hasControlCharacter(appName)) return 'App name must not contain control characters';
  const color = String(data.get('primaryColor') ?? '').trim();
  if (color && !COLOR.test(color)) return 'Primary colour: #rgb or #rrggbb, e.g. #1f6feb';
  return imageProblem(data, 'logo', LOGO) ?? imageProblem(data, 'favicon', FAVICON);
}

/** A file as the base64 data URI the branding options take. */
function dataUri(file: File): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result));
    reader.onerror = () => reject(reader.error ?? new Error(`could not read ${file.name}`));
    reader.readAsDataURL(file);
  });
}

/** An image option: a new data URI, or absent to leave it as it is. */
async function imageOption(data: FormData, name: string): Promise<string | undefined> {
  const file = chosenFile(data, name);
  return file && dataUri(file);
}

function BrandingSettings() {
  const loaded = useStoredBranding();
  // What the last save answered (POST /branding answers the new branding): the form shows it without a re-read.
  const [saved, setSaved] = useState<Branding>();
  const { reload } = useBranding();
  const action = useAction();
  const reset = useAction();
  const saving = useSiteChange(siteKeys.branding, (options: BrandingOptions) =>
    ok(api.POST('/branding', { params: { query: inAdminOrg }, body: options })),
  );
  /** Saves some options; the console's title, colour and favicon follow at once. */
  const save = async (options: BrandingOptions) => {
    const answer = await saving.mutateAsync(options);
    setSaved(answer);
    await reload();
    return answer;
  };
  // "" resets an image to the built-in mark.
  const resetImage = (option: 'logo' | 'favicon') =>
    reset.run(async () => {
      await save({ [option]: '' });
      return `The ${option} is the default again.`;
    });
  return (
    <Section title="Branding">
      <Show loaded={loaded}>
        {(fetched) => {
          const branding = saved ?? fetched;
          return (
            <>
              <dl className="grid" aria-label="Deployment">
                <div>
                  <dt className="muted">Current logo</dt>
                  <dd>
                    <img src={branding.logo} alt={`${branding.appName} logo`} height={40} />
                  </dd>
                </div>
                <div>
                  <dt className="muted">Deployment type</dt>
                  <dd>{branding.deploymentType}</dd>
                </div>
                <div>
                  <dt className="muted">Run mode</dt>
                  <dd>{branding.runMode}</dd>
                </div>
                <div>
                  <dt className="muted">Offline installer</dt>
                  <dd>{branding.isOfflineInstaller ? 'yes' : 'no'}</dd>
                </div>
              </dl>
              <Form
                // A fresh form per saved branding, so its fields start from what is now stored.
                key={`${branding.appName}|${branding.primaryColor}|${branding.showAppTag}|${branding.logo.length}`}
                label="Branding"
                submitLabel="Save branding"
                action={action}
                validate={validateBranding}
                submit={async (data) => {
                  const answer = await save({
                    // "" resets the name and the colour to their defaults.
                    appName: String(data.get('appName') ?? '').trim(),
                    primaryColor: String(data.get('primaryColor') ?? '').trim(),
                    showAppTag: data.get('showAppTag') !== null,
                    logo: await imageOption(data, 'logo'),
                    favicon: await imageOption(data, 'favicon'),
                  });
                  return `Branding saved: ${answer.appName}, ${answer.primaryColor}.`;
                }}
              >
                <Field label="App name" name="appName" defaultValue={branding.appName} hint="At most 64 characters; empty: Platform" />
                <Field
                  label="Primary colour"
                  name="primaryColor"
                  defaultValue={branding.primaryColor}
                  hint="#rgb or #rrggbb; empty: the default"
                />
                <Field
                  label="Logo"
                  name="logo"
                  type="file"
                  accept={LOGO.types.join(',')}
                  hint="PNG, JPEG, GIF, WebP or SVG; at most 256 KiB"
                />
                <Field
                  label="Favicon"
                  name="favicon"
                  type="file"
                  accept={FAVICON.types.join(',')}
                  hint="PNG, ICO, GIF, JPEG, WebP or SVG; at most 64 KiB"
                />
                <Checkbox label="Show the app tag" name="showAppTag" defaultChecked={branding.showAppTag} />
              </Form>
              <div className="form">
                <button type="button" onClick={() => void resetImage('logo')} disabled={reset.busy}>
                  Reset logo to default
                </button>
                <button type="button" onClick={() => void resetImage('favicon')} disabled={reset.busy}>
                  Reset favicon to default
                </button>
                <Outcome action={reset} />
              </div>
            </>
          );
        }}
      </Show>
    </Section>
  );
}

/** The hostname rule orgs-teams applies (trimmed, lower-cased, without a trailing dot). */
function domainProblem(raw: string): string | undefined {
  const name = raw.trim().toLowerCase().replace(/\.$/, '');
  const labels = name.split('.');
  const label = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
  if (name.length > 253 || labels.length < 2 || !labels.every((l) => label.test(l)) || /^\d+$/.test(labels[labels.length - 1]))
    return `Domain "${raw.trim()}" is not a domain name such as example.com`;
  return undefined;
}

function AllowedDomains() {
  const domains = useAllowedDomains();
  const add = useAction();
  const remove = useAction();
  const adding = useSiteChange(siteKeys.allowedDomains, (name: string) =>
    ok(api.POST('/allowed-domains', { params: { query: inAdminOrg }, body: { name } })),
  );
  const removing = useSiteChange(siteKeys.allowedDomains, (name: string) =>
    ok(api.PATCH('/allowed-domains', { params: { query: inAdminOrg }, body: { name } })),
  );
  const removeDomain = (name: string) =>
    remove.run(async () => {
      await removing.mutateAsync(name);
      return `Removed ${name}.`;
    });
  return (
    <Section title="Allowed email domains">
      <p className="muted">Sign-ups must use an email address of these domains. Accounts site admins create are exempt.</p>
      <Show loaded={domains}>
        {(names) => (
          <Table
            caption="Allowed email domains"
            rows={names}
            rowKey={(d) => d}
            empty="No whitelist: every email domain is allowed."
            columns={[
              { header: 'Domain', cell: (d) => d },
              {
                header: 'Actions',
                cell: (d) => (
                  <button type="button" className="danger" onClick={() => void removeDomain(d)} disabled={remove.busy}>
                    Remove {d}
                  </button>
                ),
              },
            ]}
          />
        )}
      </Show>
      <Outcome action={remove} />
      <Form
        label="Add to the whitelist"
        submitLabel="Add domain"
        action={add}
        validate={(data) => missing(data, ['domain', 'Domain']) ?? domainProblem(String(data.get('domain')))}
        submit={async (data) => {
          const name = String(data.get('domain')).trim();
          await adding.mutateAsync(name);
          return `Allowed ${name.toLowerCase()}.`;
        }}
      >
        <Field label="Domain" name="domain" required placeholder="example.com" />
      </Form>
    </Section>
  );
}

function Registration() {
  const registration = useRegistration();
  const action = useAction();
  const setting = useSiteChange(siteKeys.registration, (disableRegistration: boolean) =>
    ok(api.POST('/disable-registration', { params: { query: inAdminOrg }, body: { disableRegistration } })),
  );
  const set = (disableRegistration: boolean) =>
    action.run(async () => {
      const answer = await setting.mutateAsync(disableRegistration);
      return answer.disableRegistration ? 'Registration disabled.' : 'Registration enabled.';
    });
  return (
    <Section title="Registration">
      <Show loaded={registration}>
        {({ disableRegistration }) => (
          <div className="form">
            <p>
              New-user registration is <strong>{disableRegistration ? 'disabled' : 'enabled'}</strong>.
            </p>
            <button type="button" onClick={() => void set(!disableRegistration)} disabled={action.busy}>
              {disableRegistration ? 'Enable registration' : 'Disable registration'}
            </button>
          </div>
        )}
      </Show>
      <Outcome action={action} />
      <p className="muted">
        While registration is enabled, the sign-in screen offers <strong>Create an account</strong> (sign-up, within the allowed email domains
        when any are listed); while it is disabled, it does not, and the API refuses sign-ups. Accounts site admins create are not affected.
      </p>
    </Section>
  );
}
