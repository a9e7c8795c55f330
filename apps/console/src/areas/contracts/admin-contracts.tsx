import { useState, type FormEvent } from 'react';
import { Link, Route, Routes, useParams, useSearchParams } from 'react-router';
import { api, ok } from '../../api/client';
import { Field, Form, Outcome, Section, Show, useAction } from '../../ui';
import { ContractsTable } from './contract-list';
import { ContractPage } from './contract-page';
import { CreateContract } from './create-contract';
import { SuggestField } from './inputs';
import { adminRoutes, useAdminContracts, useContractChange, useOwnerSuggestions, type Contract } from './api';
import { dateToUnix, day, text, unixToDate } from './terms';

/** The site admins' contracts (`/admin/contracts/*`), through the `/contracts...` routes. */
export function AdminContracts() {
  return (
    <>
      <h1>Contracts</h1>
      <Routes>
        <Route index element={<AdminContractList />} />
        <Route path="new" element={<CreateContract />} />
        <Route path=":id" element={<AdminContract />} />
      </Routes>
    </>
  );
}

function AdminContractList() {
  const [params, setParams] = useSearchParams();
  const owner = params.get('owner')?.trim() ?? '';
  const contracts = useAdminContracts(owner);
  const suggestions = useOwnerSuggestions();
  const choose = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const value = text(new FormData(e.currentTarget), 'owner');
    setParams(value ? { owner: value } : {});
  };
  return (
    <>
      <p>
        <Link to={`${adminRoutes.base}/new${owner ? `?owner=${encodeURIComponent(owner)}` : ''}`}>Create a contract</Link>
      </p>
      <Section title={owner ? `Contracts of ${owner}` : 'Every contract'}>
        <form role="search" aria-label="Filter by owner" className="form" onSubmit={choose}>
          <SuggestField
            key={owner}
            label="Owner account"
            name="owner"
            defaultValue={owner}
            suggestions={suggestions}
            hint="An organization, or a user's login; empty: every organization and your own account"
          />
          <button type="submit">Show contracts</button>
          {owner && (
            <button type="button" onClick={() => setParams({})}>
              Show every owner
            </button>
          )}
        </form>
        <Show loaded={contracts}>
          {(list) => (
            <ContractsTable
              caption={owner ? `Contracts of ${owner}` : 'Contracts of every owner'}
              contracts={list}
              base={adminRoutes.base}
              showOwner={!owner}
            />
          )}
        </Show>
      </Section>
    </>
  );
}

function AdminContract() {
  const id = Number(useParams().id);
  if (!Number.isSafeInteger(id) || id < 1) return <p className="error">No such contract.</p>;
  return (
    <ContractPage
      key={id}
      routes={adminRoutes}
      id={id}
      may={SITE_ADMIN}
      more={(contract) => (
        <>
          <Extend contract={contract} />
          <Revoke contract={contract} />
        </>
      )}
    />
  );
}

/** The admin screens are for site admins, who hold every site permission the `/contracts...` routes check. */
const SITE_ADMIN = { bind: true, issue: true };

interface Change {
  contract: Contract;
}

/** `POST /contracts/{id}/extend`: only `end` is read; a later end than the current one. */
function Extend({ contract }: Change) {
  const action = useAction();
  const extension = useContractChange(adminRoutes, (end: number) =>
    ok(api.POST('/contracts/{id}/extend', { params: { path: { id: contract.id } }, body: { end } })),
  );
  return (
    <Section title="Extend">
      <p>
        Ends on <strong>{day(contract.end)}</strong>. Licenses issued from now on are valid until the new end.
      </p>
      <Form
        label="Extend the contract"
        submitLabel="Extend contract"
        action={action}
        validate={(data) => {
          const value = text(data, 'end');
          if (!value) return 'New end date is required';
          const end = dateToUnix(value, true);
          if (end === undefined) return `New end date: "${value}" is not a date`;
          if (end <= contract.end) return `New end date must be after the current end (${day(contract.end)})`;
        }}
        submit={async (data) => {
          const end = dateToUnix(text(data, 'end'), true) ?? 0;
          await extension.mutateAsync(end);
          return `Contract ${contract.id} now ends on ${day(end)}`;
        }}
      >
        <Field label="New end date" name="end" type="date" required min={unixToDate(contract.end)} />
      </Form>
    </Section>
  );
}

/** `POST /contracts/{id}/revoke`, asked twice: it puts every license of the contract on the revocation list. */
function Revoke({ contract }: Change) {
  const action = useAction();
  const revocation = useContractChange(adminRoutes, () =>
    ok(api.POST('/contracts/{id}/revoke', { params: { path: { id: contract.id } } })),
  );
  const [asking, setAsking] = useState(false);
  const revoke = () =>
    action.run(async () => {
      await revocation.mutateAsync(undefined);
      setAsking(false);
      return `Contract ${contract.id} is revoked`;
    });
  return (
    <Section title="Revoke">
      {contract.revoked ? (
        <p>This contract is revoked: it issues no license, and the licenses issued under it are on the revocation list.</p>
      ) : (
        <>
          <p>
            Revoking stops licenses being issued under this contract and puts those issued already on the revocation list, so clusters
            refuse them.
          </p>
          {asking ? (
            <p>
              <button type="button" className="danger" disabled={action.busy} onClick={() => void revoke()}>
                Yes, revoke contract {contract.id}
              </button>{' '}
              <button type="button" onClick={() => setAsking(false)}>
                Cancel
              </button>
            </p>
          ) : (
            <button type="button" className="danger" onClick={() => setAsking(true)}>
              Revoke contract {contract.id}
            </button>
          )}
        </>
      )}
      <Outcome action={action} />
    </Section>
  );
}
