import { useId } from 'react';
import { Form, Outcome, Show, useAction } from '../../ui';
import { clustersApi, useFeatureSets, useHubChange, type FeatureSet, type HubRef, type InstallFeatureSet } from './api';

/** The feature catalog on one cluster set: what is installed, and install / disable per feature set (to those who may manage the hub). */
export function FeatureSets({ hub, set, mayManage }: { hub: HubRef; set: string; mayManage: boolean }) {
  const catalog = useFeatureSets(hub, set);
  return (
    <>
      <h3>Feature sets of {set}</h3>
      <p className="muted">
        Installing sends the set's desired state to the hub's agent, which installs the features on every cluster of the set; a feature's
        required features come with it.
      </p>
      <Show loaded={catalog}>
        {(list) => (
          <div className="grid">
            {list.map((fs) => (
              <FeatureSetCard key={fs.name} hub={hub} set={set} featureSet={fs} mayManage={mayManage} />
            ))}
          </div>
        )}
      </Show>
    </>
  );
}

/** Helm values typed as JSON: nothing (keep what is set), or an object. */
function valuesProblem(text: string): string | undefined {
  if (!text) return undefined;
  try {
    const parsed: unknown = JSON.parse(text);
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? undefined : 'Helm values must be a JSON object';
  } catch {
    return 'Helm values must be valid JSON';
  }
}

function FeatureSetCard({ hub, set, featureSet: fs, mayManage }: { hub: HubRef; set: string; featureSet: FeatureSet; mayManage: boolean }) {
  const install = useAction();
  const disable = useAction();
  const installing = useHubChange(hub, (body: InstallFeatureSet) => clustersApi.install(hub, set, body));
  const disabling = useHubChange(hub, (features: string[] | undefined) => clustersApi.disable(hub, set, fs.name, features));
  const headingId = useId();
  const valuesId = useId();
  const required = new Set(fs.requiredFeatures);
  const installed = fs.features.filter((f) => f.installed).map((f) => f.name);

  const disableFeatures = (features?: string[]) =>
    disable.run(async () => {
      const change = await disabling.mutateAsync(features);
      return change.message;
    });

  return (
    <article className="panel" aria-labelledby={headingId}>
      <h4 id={headingId}>
        {fs.title} <code>{fs.name}</code>
      </h4>
      <p>{fs.description}</p>
      <p>
        <strong>{fs.installed ? 'Installed' : 'Not installed'}</strong>
        {fs.recommended && <span className="muted"> · recommended</span>}
      </p>
      {/* Keyed by what is installed, so the checkboxes start from the new state after a change. */}
      {mayManage && (
        <Form
          key={installed.join(',')}
          label={`Install ${fs.name}`}
          submitLabel={`Install ${fs.name}`}
          action={install}
          validate={(d) => valuesProblem(String(d.get('values') ?? '').trim())}
          submit={async (d) => {
            const text = String(d.get('values') ?? '').trim();
            // Required features are always installed with the feature set; their checkboxes are fixed.
            const features = [
              ...fs.requiredFeatures,
              ...d
                .getAll('features')
                .map(String)
                .filter((f) => !required.has(f)),
            ];
            const change = await installing.mutateAsync({
              featureSet: fs.name,
              features,
              ...(text ? { values: JSON.parse(text) as Record<string, unknown> } : {}),
            });
            return change.installed ? `${change.message}. Installed on ${set}: ${change.installed.join(', ')}.` : change.message;
          }}
        >
          <fieldset>
            <legend>Features of {fs.name}</legend>
            {fs.features.map((f) => (
              <label key={f.name} title={f.description}>
                <input
                  type="checkbox"
                  name="features"
                  value={f.name}
                  defaultChecked={required.has(f.name) || f.installed || f.recommended}
                  disabled={required.has(f.name)}
                />
                {f.title} ({f.name}){required.has(f.name) ? ', required' : ''}
                {f.installed ? ', installed' : ''}
              </label>
            ))}
          </fieldset>
          <div className="field">
            <label htmlFor={valuesId}>Helm values of {fs.name} (JSON, optional)</label>
            <textarea id={valuesId} name="values" rows={2} placeholder='{"replicas": 2}' />
            <small>Replaces the feature set's earlier values; leave empty to keep them.</small>
          </div>
        </Form>
      )}
      {mayManage && fs.installed && (
        <p>
          <button type="button" className="danger" disabled={disable.busy} onClick={() => void disableFeatures()}>
            Disable {fs.name}
          </button>{' '}
          {fs.features
            .filter((f) => f.installed && !required.has(f.name))
            .map((f) => (
              <button key={f.name} type="button" className="danger" disabled={disable.busy} onClick={() => void disableFeatures([f.name])}>
                Disable {f.name}
              </button>
            ))}
        </p>
      )}
      <Outcome action={disable} />
    </article>
  );
}
